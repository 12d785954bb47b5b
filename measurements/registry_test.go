package measurements

import (
	"context"
	"strings"
	"testing"
	"time"
)

// counting records how often one instance was called.
type counting struct{ calls int }

func (c *counting) Execute(context.Context, *Env, Params) ([]Summary, error) {
	c.calls++
	return nil, nil
}

func TestManagerKeepsOneInstancePerIdentifier(t *testing.T) {
	var made []*counting
	Register("TestCounting", func(string) Measurement { c := &counting{}; made = append(made, c); return c })
	m := NewManager(nil)
	ctx := context.Background()
	for _, id := range []string{"a", "a", "b"} {
		if err := m.Execute(ctx, "TestCounting", id, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(made) != 2 || made[0].calls != 2 || made[1].calls != 1 {
		t.Fatalf("instances %d, calls %v", len(made), made)
	}
	err := m.Execute(ctx, "NoSuchMethod", "x", nil)
	if err == nil || !strings.Contains(err.Error(), `unknown measurement method "NoSuchMethod"`) || !strings.Contains(err.Error(), "Sleep") {
		t.Fatalf("unknown method: %v", err)
	}
	if !Known()["Sleep"] || !Known()["TestCounting"] {
		t.Fatalf("known: %v", KnownList())
	}
}

func TestSleep(t *testing.T) {
	m := NewManager(nil)
	start := time.Now()
	if err := m.Execute(context.Background(), "Sleep", "s", map[string]any{"duration": "50ms"}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("Sleep returned before its duration")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Execute(ctx, "Sleep", "s", map[string]any{"duration": "1h"}); err != context.Canceled {
		t.Fatalf("cancelled Sleep: %v", err)
	}
	for _, bad := range []any{"soon", 5} {
		if err := m.Execute(context.Background(), "Sleep", "s", map[string]any{"duration": bad}); err == nil || !strings.Contains(err.Error(), "param duration") {
			t.Errorf("duration %v: %v", bad, err)
		}
	}
}
