package measurements

import (
	"context"
	testingclock "k8s.io/utils/clock/testing"
	"strings"
	"testing"
	"time"
)

func TestTimer(t *testing.T) {
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	env := &Env{Clock: clock}
	m := &timerMeasurement{}
	steps := []struct {
		params  Params
		advance time.Duration
		wantErr string
	}{
		{Params{"action": "start", "label": "create"}, 90 * time.Second, ""},
		{Params{"action": "start", "label": "delete"}, 30 * time.Second, ""},
		{Params{"action": "stop", "label": "create"}, 0, ""},
		{Params{"action": "stop", "label": "delete"}, 0, ""},
		{Params{"action": "stop", "label": "delete"}, 0, `timer "delete" was stopped without being started`},
		{Params{"action": "start"}, 0, "param label: missing"},
		{Params{"action": "pause", "label": "x"}, 0, "param action"},
	}
	for i, s := range steps {
		_, err := m.Execute(context.Background(), env, s.params)
		if (s.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), s.wantErr)) {
			t.Fatalf("step %d %v: err %v, want %q", i, s.params, err, s.wantErr)
		}
		clock.Step(s.advance)
	}
	sums, err := m.Execute(context.Background(), env, Params{"action": "gather"})
	if err != nil || len(sums) != 1 {
		t.Fatalf("gather: %v %v", sums, err)
	}
	s := sums[0]
	item := s.PerfData.DataItems[0]
	if s.Name != "Timer" || s.PerfData.Version != "v1" || item.Unit != "s" || item.Labels["test"] != "phases" ||
		item.Data["create"] != 120 || item.Data["delete"] != 30 || s.Headline["create s"] != 120 {
		t.Fatalf("summary %+v item %+v", s, item)
	}
}
