package measurements

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"gopkg.in/yaml.v3"
	"k8s.io/klog/v2"

	"github.com/kscale/kscale/measurements/metrics"
)

func init() {
	Register("APIResponsivenessPrometheus", SLO, func(string) Measurement { return newAPIResponsiveness(false) })
	Register("APIResponsivenessPrometheusSimple", SLO, func(string) Measurement { return newAPIResponsiveness(true) })
}

const (
	apiRespSummaryName       = "APIResponsivenessPrometheus"
	apiRespSimpleSummaryName = "APIResponsivenessPrometheus_simple"

	// The SLO thresholds of the API call latency SLI: single-object calls
	// (GET of one object and every mutating call) within 1 s, LISTs of a
	// namespace or of the cluster within 30 s.
	apiRespSingleObjectThreshold = 1 * time.Second
	apiRespCollectionThreshold   = 30 * time.Second

	// apiRespScrapeInterval is how often /metrics is scraped between start
	// and gather: the SLI window is 5 minutes, and a scrape every 30 s gives
	// windows that end every 30 s, close to what a Prometheus server with
	// the usual scrape interval sees.
	apiRespScrapeInterval = 30 * time.Second
)

// apiRespMetrics are the apiserver's request latency histograms, newest
// first: the SLI histogram (1.26+) leaves out webhook and priority-and-
// fairness queueing time as the SLI definition does; the older ones are
// used only when a server has nothing better.
var apiRespMetrics = []string{
	"apiserver_request_sli_duration_seconds",
	"apiserver_request_slo_duration_seconds",
	"apiserver_request_duration_seconds",
}

// apiRespKeyLabels are the labels an API call item is made of, in the order
// of its HistogramKey.
var apiRespKeyLabels = []string{"verb", "resource", "subresource", "scope"}

// Exclusions of the SLI: streaming and long-running calls whose latency says
// nothing about the apiserver's responsiveness, and events, which are best
// effort.
var (
	apiRespExcludedVerbs        = []string{"WATCH", "WATCHLIST", "CONNECT"}
	apiRespExcludedSubresources = []string{"log", "exec", "portforward", "attach", "proxy"}
	apiRespExcludedResources    = []string{"events"}
	// apiRespReadOnlyVerbs are measured for every API group; every other
	// verb left (POST, PUT, PATCH, DELETE, APPLY, DELETECOLLECTION) is a
	// mutating call, which the SLO covers for built-in resources only.
	apiRespReadOnlyVerbs = []string{"GET", "LIST"}
	// apiRespBuiltinGroups are the built-in API groups whose names do not
	// end in .k8s.io; the core group is "".
	apiRespBuiltinGroups = []string{"", "apps", "batch", "autoscaling", "policy", "extensions"}
)

// apiRespBuiltinGroup says whether an API group is built into the
// apiserver, for the SLO's exclusion of CRDs and aggregated APIs from the
// mutating-call SLI. The rule: the core group "", the historical groups
// without a domain (apps, batch, autoscaling, policy, extensions), and any
// group ending in ".k8s.io" (rbac.authorization.k8s.io, networking.k8s.io,
// ...), since that domain is reserved for Kubernetes' own APIs: a CRD may
// use it only with the api-approved annotation. An aggregated
// metrics.k8s.io passes too, but nothing mutates it. A series without a
// group label (old servers) counts as the core group.
func apiRespBuiltinGroup(group string) bool {
	return slices.Contains(apiRespBuiltinGroups, group) || strings.HasSuffix(group, ".k8s.io")
}

// apiRespKeep says whether a series of the latency histogram counts toward
// the SLI.
func apiRespKeep(labels map[string]string) bool {
	verb := labels["verb"]
	switch {
	case slices.Contains(apiRespExcludedVerbs, verb),
		slices.Contains(apiRespExcludedSubresources, labels["subresource"]),
		slices.Contains(apiRespExcludedResources, labels["resource"]):
		return false
	case slices.Contains(apiRespReadOnlyVerbs, verb):
		return true
	default:
		return apiRespBuiltinGroup(labels["group"])
	}
}

// apiResponsiveness is APIResponsivenessPrometheus (and its Simple variant):
// the latency of API calls between start and gather per (verb, resource,
// subresource, scope), judged against the API call latency SLO.
//
// Without a Prometheus server it scrapes the apiserver's /metrics itself, at
// start, every interval until gather, and at gather, and computes what
// Prometheus would: the run's quantiles from the delta of the first and last
// scrape, and the SLI, the worst p99 over 5-minute windows, from the scrapes
// in between (metrics.WorstWindow). With Env.PrometheusURL it asks that
// server the same in PromQL.
//
// The default method judges each item's worst 5-minute-window p99; the
// Simple method (useSimpleLatencyQuery) judges the p99 of the whole run,
// which is what clusterloader2's simple query measures and suits runs too
// short for windows to mean much. The judged p99 is the PerfData's Perc99;
// Perc50 and Perc90 are the whole run's in both.
//
// Params at gather:
//   - enableViolations (default true): false still lists the items over
//     their thresholds in Summary.Violations but returns no error, so the
//     verdict is pass;
//   - allowedSlowCalls (default 0): as in clusterloader2, an item over its
//     threshold passes anyway when allowedSlowCalls > 0 and the item had at
//     most that many slow calls (calls over its threshold);
//   - customThresholds: a list of {verb, resource, subresource, scope,
//     threshold}, or that list as a YAML string, replacing the SLO threshold
//     of the items they name exactly;
//   - legacyNamespaceListThreshold: a threshold for namespace-scoped LISTs
//     in place of 30 s (the SLO said 5 s until 2022);
//   - useSimpleLatencyQuery, summaryName.
type apiResponsiveness struct {
	simple bool
	// interval is the time between scrapes; tests shorten it.
	interval time.Duration
	// window is the SLI window.
	window time.Duration
	// scrape fetches the apiserver's /metrics; nil means
	// env.APIServerMetrics. Tests set it.
	scrape func(ctx context.Context, env *Env) ([]byte, error)

	mu      sync.Mutex
	started bool
	start   time.Time
	// viaPrometheus is set when the run's numbers come from PromQL.
	viaPrometheus bool
	// metric is the histogram chosen at start.
	metric string
	// first is each key's histogram at start; keys that appear later
	// started from nothing.
	first    map[metrics.HistogramKey]metrics.Histogram
	last     map[metrics.HistogramKey]metrics.Histogram
	trackers map[metrics.HistogramKey]*metrics.WindowTracker
	scrapes  int
	failures int
	// stop ends the background scrapes and waits for them; nil when none
	// run.
	stop func()
}

func newAPIResponsiveness(simple bool) *apiResponsiveness {
	return &apiResponsiveness{simple: simple, interval: apiRespScrapeInterval, window: metrics.DefaultWindow}
}

// Execute runs action start or gather.
func (a *apiResponsiveness) Execute(ctx context.Context, env *Env, params Params) ([]Summary, error) {
	action, err := params.Action("start", "gather")
	if err != nil {
		return nil, err
	}
	if action == "start" {
		return nil, a.begin(ctx, env)
	}
	cfg, err := parseAPIRespConfig(params, a.simple)
	if err != nil {
		return nil, err
	}
	return a.gather(ctx, env, cfg)
}

// begin starts a measurement: it takes the first scrape (so that a cluster
// whose /metrics cannot be read says so at once) and starts the background
// scrapes. A second start discards the first.
func (a *apiResponsiveness) begin(ctx context.Context, env *Env) error {
	a.halt()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started, a.start, a.viaPrometheus = false, env.now(), env.PrometheusURL != ""
	a.metric, a.first, a.last, a.trackers = "", nil, nil, nil
	a.scrapes, a.failures = 0, 0
	err := a.beginScrapes(ctx, env)
	if a.viaPrometheus {
		// The server keeps the history; kscale's own scrapes, when the
		// apiserver's /metrics can be read, only cross-check it.
		if err != nil {
			klog.V(2).Infof("APIResponsivenessPrometheus: no cross-check of Prometheus: %v", err)
		}
		a.started = true
		return nil
	}
	return err
}

// beginScrapes takes the first scrape and starts the background ones.
// a.mu is held.
func (a *apiResponsiveness) beginScrapes(ctx context.Context, env *Env) error {
	families, err := a.fetch(ctx, env)
	if err != nil {
		return &NotMeasuredError{Reason: "at start: " + err.Error()}
	}
	for _, name := range apiRespMetrics {
		if families[name] != nil {
			a.metric = name
			break
		}
	}
	if a.metric == "" {
		return notMeasuredf("the apiserver's /metrics has none of %s", strings.Join(apiRespMetrics, ", "))
	}
	hists, err := metrics.HistogramsBy(families[a.metric], apiRespKeyLabels, apiRespKeep)
	if err != nil {
		return fmt.Errorf("reading %s at start: %w", a.metric, err)
	}
	a.first = hists
	a.last = map[metrics.HistogramKey]metrics.Histogram{}
	a.trackers = map[metrics.HistogramKey]*metrics.WindowTracker{}
	a.record(a.start, hists)
	a.started = true
	klog.V(2).Infof("APIResponsivenessPrometheus: measuring %s, %d API call kinds so far, a scrape every %v", a.metric, len(hists), a.interval)

	loopCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go a.loop(loopCtx, env, done)
	var once sync.Once
	a.stop = func() {
		once.Do(cancel)
		<-done
	}
	return nil
}

// loop scrapes every interval until ctx ends (gather cancels it, or the run
// ends). A failed scrape is logged and skipped: one lost scrape only makes
// the windows around it a little longer.
func (a *apiResponsiveness) loop(ctx context.Context, env *Env, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(a.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// select picks at random among ready cases; do not start a
			// scrape once stopped.
			if ctx.Err() != nil {
				return
			}
			if err := a.scrapeOnce(ctx, env); err != nil && ctx.Err() == nil {
				klog.Warningf("APIResponsivenessPrometheus: %v", err)
			}
		}
	}
}

// halt stops the background scrapes, if any run, and waits for them.
func (a *apiResponsiveness) halt() {
	a.mu.Lock()
	stop := a.stop
	a.stop = nil
	a.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// fetch scrapes and parses the apiserver's metrics.
func (a *apiResponsiveness) fetch(ctx context.Context, env *Env) (map[string]*dto.MetricFamily, error) {
	scrape := a.scrape
	if scrape == nil {
		scrape = func(ctx context.Context, env *Env) ([]byte, error) { return env.APIServerMetrics(ctx) }
	}
	text, err := scrape(ctx, env)
	if err != nil {
		return nil, err
	}
	families, err := metrics.ParseText(text)
	if err != nil {
		return nil, fmt.Errorf("the apiserver's /metrics: %w", err)
	}
	return families, nil
}

// scrapeOnce takes one scrape and adds it to every key's windows.
func (a *apiResponsiveness) scrapeOnce(ctx context.Context, env *Env) error {
	families, err := a.fetch(ctx, env)
	now := env.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.failures++
		return err
	}
	hists, err := metrics.HistogramsBy(families[a.metric], apiRespKeyLabels, apiRespKeep)
	if err != nil {
		a.failures++
		return fmt.Errorf("reading %s: %w", a.metric, err)
	}
	a.record(now, hists)
	return nil
}

// record adds a scrape taken at t. A key seen for the first time after
// start gets an empty histogram at the start time first, since its calls
// began after start. A key missing from a scrape (a restarted apiserver
// that has not served that call yet) is left out of it; its next scrape's
// lower count then reads as a counter reset.
func (a *apiResponsiveness) record(t time.Time, hists map[metrics.HistogramKey]metrics.Histogram) {
	a.scrapes++
	for key, h := range hists {
		tr := a.trackers[key]
		if tr == nil {
			tr = metrics.NewWindowTracker(0.99, a.window)
			if _, atStart := a.first[key]; !atStart {
				tr.Add(a.start, metrics.Histogram{})
			}
			a.trackers[key] = tr
		}
		tr.Add(t, h)
		a.last[key] = h
	}
}

// gather ends the measurement and judges what it measured.
func (a *apiResponsiveness) gather(ctx context.Context, env *Env, cfg apiRespConfig) ([]Summary, error) {
	a.halt()
	a.mu.Lock()
	started, viaPrometheus, start := a.started, a.viaPrometheus, a.start
	if !started {
		a.mu.Unlock()
		return nil, fmt.Errorf("gather without a successful start")
	}
	scraping := a.trackers != nil
	a.mu.Unlock()
	if !viaPrometheus {
		items, source, err := a.scrapeItems(ctx, env)
		if err != nil {
			return nil, err
		}
		return a.judgeItems(cfg, items, source)
	}
	items, source, err := a.queryItems(ctx, env, cfg, start, env.now())
	if !scraping {
		if err != nil {
			return nil, err
		}
		return a.judgeItems(cfg, items, source)
	}
	scraped, scrapedFrom, scrapeErr := a.scrapeItems(ctx, env)
	scrapedFrom = "kscale's scrapes of the apiserver (" + scrapedFrom + ")"
	if err != nil {
		// Prometheus could not answer: the verdict is kscale's own, and
		// the summary says so.
		if scrapeErr != nil {
			return nil, err
		}
		summaries, verdict := a.judgeItems(cfg, scraped, scrapedFrom)
		for i := range summaries {
			summaries[i].CrossCheck = &CrossCheck{Source: scrapedFrom, Other: "Prometheus at " + env.PrometheusURL, Note: err.Error()}
		}
		return summaries, verdict
	}
	summaries, verdict := a.judgeItems(cfg, items, source)
	for i := range summaries {
		if scrapeErr != nil {
			summaries[i].CrossCheck = &CrossCheck{Source: source, Other: scrapedFrom, Note: scrapeErr.Error()}
			continue
		}
		summaries[i].CrossCheck = crossCheckAPICalls(source, scrapedFrom, items, scraped, cfg.simple)
	}
	return summaries, verdict
}

// judgeItems judges items computed from source; none is "not measured".
func (a *apiResponsiveness) judgeItems(cfg apiRespConfig, items []apiCallItem, source string) ([]Summary, error) {
	if len(items) == 0 {
		return nil, notMeasuredf("no API call the SLO covers was recorded in %s between start and gather", source)
	}
	return a.judge(cfg, items)
}

// scrapeItems takes the final scrape and computes the items from the
// scrapes.
func (a *apiResponsiveness) scrapeItems(ctx context.Context, env *Env) ([]apiCallItem, string, error) {
	if err := a.scrapeOnce(ctx, env); err != nil {
		return nil, "", &NotMeasuredError{Reason: "at gather: " + err.Error()}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures > 0 {
		klog.Warningf("APIResponsivenessPrometheus: %d of %d scrapes of /metrics failed; windows around them are longer", a.failures, a.scrapes+a.failures)
	}
	var items []apiCallItem
	for key, last := range a.last {
		run := last.Sub(a.first[key])
		if run.Count <= 0 {
			continue
		}
		v := key.Values()
		worst := a.trackers[key].Result()
		items = append(items, apiCallItem{
			Verb: v[0], Resource: v[1], Subresource: v[2], Scope: v[3],
			Count:       int(math.Round(run.Count)),
			Perc50:      run.Quantile(0.5),
			Perc90:      run.Quantile(0.9),
			Perc99:      run.Quantile(0.99),
			Window99:    worst.Quantile,
			WindowStart: worst.Start,
			WindowEnd:   worst.End,
			run:         run,
		})
	}
	return items, a.metric, nil
}

// apiCallItem is one kind of API call's latency over the run, in seconds.
type apiCallItem struct {
	Verb, Resource, Subresource, Scope string
	// Count is the number of calls in the run.
	Count int
	// SlowCount is the number of calls over the item's threshold (see
	// metrics.Histogram.CountAbove for how it is estimated).
	SlowCount int
	// Perc50, Perc90 and Perc99 are the quantiles of the whole run.
	Perc50, Perc90, Perc99 float64
	// Window99 is the worst 5-minute-window p99, the SLI; NaN when
	// unknown. WindowStart and WindowEnd bound that window, zero when
	// unknown (Prometheus answers the worst value, not when it was).
	Window99               float64
	WindowStart, WindowEnd time.Time
	// run is the run's histogram, for SlowCount.
	run metrics.Histogram
}

func (it *apiCallItem) name() string {
	res := it.Resource
	if it.Subresource != "" {
		res += "/" + it.Subresource
	}
	return fmt.Sprintf("%s %s scope=%s", it.Verb, res, it.Scope)
}

// apiRespConfig are the gather params.
type apiRespConfig struct {
	simple           bool
	enableViolations bool
	allowedSlowCalls int
	// legacyNamespaceList replaces the 30 s threshold of namespace LISTs
	// when set.
	legacyNamespaceList time.Duration
	custom              []apiCallThreshold
	summaryName         string
}

// apiCallThreshold is one customThresholds entry.
type apiCallThreshold struct {
	Verb, Resource, Subresource, Scope string
	Threshold                          time.Duration
}

// matches says whether the entry names the item: every field equal, verb
// and scope in any case.
func (t *apiCallThreshold) matches(it *apiCallItem) bool {
	return strings.EqualFold(t.Verb, it.Verb) && t.Resource == it.Resource &&
		t.Subresource == it.Subresource && strings.EqualFold(t.Scope, it.Scope)
}

func parseAPIRespConfig(p Params, simple bool) (apiRespConfig, error) {
	cfg := apiRespConfig{}
	var err error
	if cfg.simple, err = p.Bool("useSimpleLatencyQuery", simple); err != nil {
		return cfg, err
	}
	// The Simple method is simple whatever the param says.
	cfg.simple = cfg.simple || simple
	if cfg.enableViolations, err = p.Bool("enableViolations", true); err != nil {
		return cfg, err
	}
	if cfg.allowedSlowCalls, err = p.Int("allowedSlowCalls", 0); err != nil {
		return cfg, err
	}
	if cfg.allowedSlowCalls < 0 {
		return cfg, fmt.Errorf("param allowedSlowCalls: %d is negative", cfg.allowedSlowCalls)
	}
	if cfg.legacyNamespaceList, err = p.Duration("legacyNamespaceListThreshold", 0); err != nil {
		return cfg, err
	}
	if cfg.custom, err = parseAPICallThresholds(p["customThresholds"]); err != nil {
		return cfg, err
	}
	def := apiRespSummaryName
	if cfg.simple {
		def = apiRespSimpleSummaryName
	}
	if cfg.summaryName, err = p.String("summaryName", def); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// parseAPICallThresholds reads customThresholds: a list of maps, or a YAML
// string holding one, which is how clusterloader2 configs pass it (a
// template parameter with the list in a block string).
func parseAPICallThresholds(v any) ([]apiCallThreshold, error) {
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		var list []any
		if err := yaml.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("param customThresholds: not a YAML list: %w", err)
		}
		v = list
	}
	list, err := Params{"customThresholds": v}.List("customThresholds")
	if err != nil {
		return nil, err
	}
	var out []apiCallThreshold
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("param customThresholds[%d]: want a map of verb, resource, subresource, scope, threshold, got %T", i, e)
		}
		entry := Params(m)
		var t apiCallThreshold
		for key, dst := range map[string]*string{"verb": &t.Verb, "resource": &t.Resource, "subresource": &t.Subresource, "scope": &t.Scope} {
			if *dst, err = entry.String(key, ""); err != nil {
				return nil, fmt.Errorf("param customThresholds[%d]: %w", i, err)
			}
		}
		if t.Threshold, err = entry.Duration("threshold", 0); err != nil {
			return nil, fmt.Errorf("param customThresholds[%d]: %w", i, err)
		}
		if t.Threshold <= 0 {
			return nil, fmt.Errorf("param customThresholds[%d]: threshold must be a positive duration", i)
		}
		out = append(out, t)
	}
	return out, nil
}

// threshold is an item's latency threshold: a custom threshold naming it
// exactly (verb and scope in any case), else the SLO's: 1 s for calls on
// one object (scope=resource: GET, and every create, update, patch and
// delete of one object), 30 s for calls on a namespace or the cluster
// (LIST, DELETECOLLECTION), with legacyNamespaceListThreshold in place of
// 30 s for namespace LISTs when set.
func (c *apiRespConfig) threshold(it *apiCallItem) time.Duration {
	for _, t := range c.custom {
		if t.matches(it) {
			return t.Threshold
		}
	}
	switch {
	case it.Scope == "resource":
		return apiRespSingleObjectThreshold
	case it.Verb == "LIST" && it.Scope == "namespace" && c.legacyNamespaceList > 0:
		return c.legacyNamespaceList
	default:
		return apiRespCollectionThreshold
	}
}

// judged is the p99 the verdict is about: the worst window's unless simple
// or no window had calls.
func (c *apiRespConfig) judged(it *apiCallItem) float64 {
	if c.simple || math.IsNaN(it.Window99) {
		return it.Perc99
	}
	return it.Window99
}

// judge makes the summary of the items: PerfData, headline and the items
// over their thresholds.
func (a *apiResponsiveness) judge(cfg apiRespConfig, items []apiCallItem) ([]Summary, error) {
	for _, c := range cfg.custom {
		found := false
		for i := range items {
			found = found || c.matches(&items[i])
		}
		if !found {
			named := apiCallItem{Verb: c.Verb, Resource: c.Resource, Subresource: c.Subresource, Scope: c.Scope}
			klog.Warningf("APIResponsivenessPrometheus: the custom threshold for %s matches no API call of the run", named.name())
		}
	}
	for i := range items {
		it := &items[i]
		if it.run.Buckets != nil {
			it.SlowCount = int(math.Round(it.run.CountAbove(cfg.threshold(it).Seconds())))
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		pi, pj := cfg.judged(&items[i]), cfg.judged(&items[j])
		if pi != pj {
			return pi > pj
		}
		return items[i].name() < items[j].name()
	})

	what := fmt.Sprintf("worst %s window", apiRespWindowName(a.window))
	if cfg.simple {
		what = "whole run"
	}
	perf := &metrics.PerfData{Version: metrics.PerfDataVersion}
	var bad []string
	// worstBad is the violating item furthest over its threshold, whose
	// window is the summary's violating window.
	var worstBad *apiCallItem
	calls, slow := 0, 0
	for i := range items {
		it := &items[i]
		p99, threshold := cfg.judged(it), cfg.threshold(it)
		calls += it.Count
		slow += it.SlowCount
		perf.DataItems = append(perf.DataItems, metrics.DataItem{
			Data: map[string]float64{
				"Perc50": apiRespMillis(it.Perc50),
				"Perc90": apiRespMillis(it.Perc90),
				"Perc99": apiRespMillis(p99),
			},
			Unit: "ms",
			Labels: map[string]string{
				"Verb":        it.Verb,
				"Resource":    it.Resource,
				"Subresource": it.Subresource,
				"Scope":       it.Scope,
				"Count":       strconv.Itoa(it.Count),
				"SlowCount":   strconv.Itoa(it.SlowCount),
			},
		})
		if !(p99 > threshold.Seconds()) {
			if i < 5 {
				klog.V(2).Infof("APIResponsivenessPrometheus: top latency %s: p99 (%s) %s, threshold %v, %d calls", it.name(), what, apiRespSeconds(p99), threshold, it.Count)
			}
			continue
		}
		if cfg.allowedSlowCalls > 0 && it.SlowCount <= cfg.allowedSlowCalls {
			klog.Infof("APIResponsivenessPrometheus: %s: p99 (%s) %s > %v allowed: %d slow calls of %d allowed", it.name(), what, apiRespSeconds(p99), threshold, it.SlowCount, cfg.allowedSlowCalls)
			continue
		}
		if !it.WindowEnd.IsZero() && !cfg.simple {
			klog.Warningf("APIResponsivenessPrometheus: %s: the worst window ended at %s", it.name(), it.WindowEnd.Format(time.RFC3339))
		}
		bad = append(bad, fmt.Sprintf("%s: p99 (%s) %s > %v", it.name(), what, apiRespSeconds(p99), threshold))
		if worstBad == nil || p99/threshold.Seconds() > cfg.judged(worstBad)/cfg.threshold(worstBad).Seconds() {
			worstBad = it
		}
	}

	// The headline's worst item is the one nearest its threshold (or
	// furthest over it), not the slowest: a 20 s cluster LIST is fine, a
	// 3 s GET is not.
	worst := &items[0]
	for i := range items {
		if cfg.judged(&items[i])/cfg.threshold(&items[i]).Seconds() > cfg.judged(worst)/cfg.threshold(worst).Seconds() {
			worst = &items[i]
		}
	}
	s := Summary{
		Name: cfg.summaryName,
		Headline: map[string]float64{
			"worst p99 ms": apiRespMillis(cfg.judged(worst)),
			"items":        float64(len(items)),
			"calls":        float64(calls),
			"slow calls":   float64(slow),
		},
		Thresholds: map[string]float64{"worst p99 ms": float64(cfg.threshold(worst).Milliseconds())},
		PerfData:   perf,
		Violations: bad,
	}
	if !cfg.enableViolations {
		// Listed for the reader, but the verdict stays pass.
		return []Summary{s}, nil
	}
	// The simple method judges the whole run, whose span the Manager
	// gives the summary; so does a window Prometheus did not place.
	if worstBad != nil && !cfg.simple && !worstBad.WindowStart.IsZero() && !worstBad.WindowEnd.IsZero() {
		s.Window = &TimeRange{Start: worstBad.WindowStart, End: worstBad.WindowEnd}
	}
	return []Summary{s}, violations(bad)
}

// apiRespWindowName names a window as a reader says it: "5-min".
func apiRespWindowName(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d-min", int(d/time.Minute))
	}
	return d.String()
}

// apiRespMillis converts seconds to milliseconds. An unknown quantile (NaN:
// Prometheus had no answer for it) becomes 0, as clusterloader2 leaves it,
// because PerfData is JSON and JSON has no NaN.
func apiRespMillis(seconds float64) float64 {
	if math.IsNaN(seconds) {
		return 0
	}
	return seconds * 1000
}

// apiRespSeconds prints a latency to the millisecond: "31.2s", "800ms".
func apiRespSeconds(seconds float64) string {
	return time.Duration(seconds * float64(time.Second)).Round(time.Millisecond).String()
}
