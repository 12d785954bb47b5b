package measurements

import (
	"fmt"
	"math"
	"sort"

	"github.com/kscale/kscale/measurements/metrics"
)

// CrossCheckTolerance is how far apart two computations of one quantile may
// be and still agree: 5 % of the larger, or one bucket of the histogram it
// comes from (metrics.Agree).
const CrossCheckTolerance = 0.05

// CrossCheck compares a summary's numbers with the same numbers computed
// another way: kscale's own scrapes of the apiserver against the PromQL of a
// Prometheus server scraping the same apiserver.
type CrossCheck struct {
	// Source is where the summary's numbers come from; Other is where the
	// compared ones do.
	Source string `json:"source"`
	Other  string `json:"other"`
	// Rows compare one number of one item each.
	Rows []CrossCheckRow `json:"rows"`
	// Missing names items only one side has, and why that can be.
	Missing []string `json:"missing,omitempty"`
	// Note says why the other side gave nothing to compare, when it did
	// not.
	Note string `json:"note,omitempty"`
}

// CrossCheckRow is one number of one item, computed both ways.
type CrossCheckRow struct {
	Item string `json:"item"`
	// Calls are the item's calls in the summary's numbers.
	Calls int     `json:"calls"`
	What  string  `json:"what"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	Other float64 `json:"other"`
	// Agree: within CrossCheckTolerance or one bucket.
	Agree bool `json:"agree"`
}

// Disagreements are the rows that do not agree.
func (c *CrossCheck) Disagreements() []CrossCheckRow {
	var out []CrossCheckRow
	for _, r := range c.Rows {
		if !r.Agree {
			out = append(out, r)
		}
	}
	return out
}

// String says in one line how the two agree.
func (c *CrossCheck) String() string {
	if c.Note != "" {
		return fmt.Sprintf("cross-check with %s: %s", c.Other, c.Note)
	}
	return fmt.Sprintf("cross-check with %s: %d of %d numbers agree within %g%% or one bucket, %d items on one side only",
		c.Other, len(c.Rows)-len(c.Disagreements()), len(c.Rows), 100*CrossCheckTolerance, len(c.Missing))
}

// crossCheckAPICalls compares the API call items computed from source with
// those from other: each item both have, its p50, p90 and p99 of the run
// and, unless simple (which asks Prometheus for no windows), its
// worst-window p99, in milliseconds, against the bucket bounds of the
// run's histogram.
func crossCheckAPICalls(source, other string, items, others []apiCallItem, simple bool) *CrossCheck {
	c := &CrossCheck{Source: source, Other: other}
	byName := map[string]*apiCallItem{}
	for i := range others {
		byName[others[i].name()] = &others[i]
	}
	seen := map[string]bool{}
	for i := range items {
		it := &items[i]
		o := byName[it.name()]
		seen[it.name()] = true
		if o == nil {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: %d calls in %s only", it.name(), it.Count, source))
			continue
		}
		bounds := it.run.Bounds()
		if len(bounds) == 0 {
			bounds = o.run.Bounds()
		}
		for _, q := range []struct {
			what string
			a, b float64
		}{
			{"p50", it.Perc50, o.Perc50},
			{"p90", it.Perc90, o.Perc90},
			{"p99", it.Perc99, o.Perc99},
			{"worst-window p99", it.Window99, o.Window99},
		} {
			if (math.IsNaN(q.a) && math.IsNaN(q.b)) || (simple && q.what == "worst-window p99") {
				continue
			}
			c.Rows = append(c.Rows, CrossCheckRow{Item: it.name(), Calls: it.Count, What: q.what, Unit: "ms",
				Value: apiRespMillis(q.a), Other: apiRespMillis(q.b), Agree: metrics.Agree(q.a, q.b, CrossCheckTolerance, bounds)})
		}
	}
	for i := range others {
		if !seen[others[i].name()] {
			c.Missing = append(c.Missing, fmt.Sprintf("%s: %d calls in %s only", others[i].name(), others[i].Count, other))
		}
	}
	sort.Strings(c.Missing)
	return c
}
