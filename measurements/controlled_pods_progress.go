package measurements

import (
	"fmt"
	"strings"
)

// podsProgress is what WaitForControlledPodsRunning's progress line says.
type podsProgress struct {
	// what the count is of: "pods running", or "pods deleted" when the
	// gather waits only for deleted controllers' pods to go.
	what        string
	done, total int
	// note says what the count leaves out: pods not ready, pending,
	// terminating; the controllers that got there.
	note string
}

// controlledPodsProgress sums the trackers' pods. Running: the pods
// running and ready of the current template, each controller counted up
// to its desired count, out of the desired counts of the controllers
// created, scaled or updated. Deleted: the pods gone of those the deleted
// controllers had when their deletion was seen. kind names the
// controllers ("Deployment").
func controlledPodsProgress(kind string, trackers map[string]*controllerTracker) podsProgress {
	var live, gone podTally
	var running, desired, unsized, initial int
	var controllers, ready, deletions, deleted int
	for _, t := range trackers {
		reached := t.state == ctrlOpReached
		if t.deleted {
			deletions++
			if reached {
				deleted++
			}
			gone = gone.plus(t.tally)
			initial += t.initial
			continue
		}
		controllers++
		if reached {
			ready++
		}
		if t.view.desired < 0 {
			unsized++
			continue
		}
		live = live.plus(t.tally)
		desired += t.view.desired
		running += min(t.tally.RunningUpdated, t.view.desired)
	}
	left := gone.Total - gone.inactive()
	if controllers == 0 && deletions > 0 {
		notes := append(gone.others(), fmt.Sprintf("%d/%d %ss gone", deleted, deletions, kind))
		return podsProgress{what: "pods deleted", done: max(0, initial-left), total: initial, note: strings.Join(notes, ", ")}
	}
	var notes []string
	if old := live.Running - live.RunningUpdated; old > 0 {
		notes = append(notes, fmt.Sprintf("%d running of an old template", old))
	}
	notes = append(notes, live.others()...)
	if unsized > 0 {
		notes = append(notes, fmt.Sprintf("%d %ss of unknown size", unsized, kind))
	}
	if left > 0 {
		notes = append(notes, fmt.Sprintf("%d pods of deleted %ss left", left, kind))
	}
	notes = append(notes, fmt.Sprintf("%d/%d %ss ready", ready, controllers, kind))
	return podsProgress{what: "pods running", done: running, total: desired, note: strings.Join(notes, ", ")}
}
