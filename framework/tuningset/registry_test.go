package tuningset

import (
	"slices"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/config"
)

func TestRegistry(t *testing.T) {
	specs := []config.TuningSet{
		{Name: "Uniform5qps", QPSLoad: &config.QPSLoad{QPS: 5}},
		{Name: "Global", GlobalQPSLoad: &config.GlobalQPSLoad{QPS: 5, Burst: 1}},
		{Name: "Sequence", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{ParallelismLimit: 1}},
	}
	r, err := NewRegistry(specs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Names(), []string{"Global", "Sequence", "Uniform5qps"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	g1, err1 := r.Get("Global")
	g2, err2 := r.Get("Global")
	if err1 != nil || err2 != nil || g1 != g2 {
		t.Errorf("Get(Global) twice = %p, %p (%v, %v), want one shared instance", g1, g2, err1, err2)
	}
	if _, ok := g1.(*globalQPSLoad); !ok {
		t.Errorf("Get(Global) is %T, want a globalQPSLoad", g1)
	}
	_, err = r.Get("Missing")
	if want := `tuning set "Missing" is not defined; defined: Global, Sequence, Uniform5qps`; err == nil || err.Error() != want {
		t.Errorf("Get(Missing) error %v, want %q", err, want)
	}

	empty, err := NewRegistry(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Get("x"); err == nil || !strings.Contains(err.Error(), "defines no tuningSets") {
		t.Errorf("Get on an empty registry: %v", err)
	}
}

func TestRegistryReportsEveryProblem(t *testing.T) {
	_, err := NewRegistry([]config.TuningSet{
		{Name: "a", QPSLoad: &config.QPSLoad{QPS: 1}},
		{Name: "b", QPSLoad: &config.QPSLoad{QPS: 0}},
		{Name: "a", SteppedLoad: &config.SteppedLoad{BurstSize: 1}},
		{Name: "c", ParallelismLimitedLoad: &config.ParallelismLimitedLoad{}},
	})
	want := "tuningSets[name=b].qpsLoad.qps: must be > 0, got 0\n" +
		`tuningSets[name=a]: duplicate name: tuningSets[0] and tuningSets[2] are both named "a"` + "\n" +
		"tuningSets[name=c].parallelismLimitedLoad.parallelismLimit: must be >= 1, got 0"
	if err == nil || err.Error() != want {
		t.Errorf("NewRegistry error\n got: %v\nwant: %s", err, want)
	}
}
