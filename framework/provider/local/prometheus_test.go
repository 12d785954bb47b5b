package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/kscale/kscale/framework/provider/local/localtest"
)

// TestPrometheusScrapesTheClusterAndFleets starts a cluster with its
// Prometheus and a fleet, and waits until Prometheus scrapes every
// component and the fleet with success: the client certificate is let in
// by the apiserver, the controller-manager and the scheduler, and the
// fleet Prometheus learns of from its targets file.
func TestPrometheusScrapesTheClusterAndFleets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := localtest.Options()
	o.Prometheus = true
	c, err := Start(ctx, filepath.Join(t.TempDir(), "cluster"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	f, err := c.StartFleet(ctx, FleetOptions{Group: "prom", Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	saved, err := c.Dir.ReadState()
	if err != nil {
		t.Fatal(err)
	}
	prom := saved.Component("prometheus")
	if prom == nil || !prom.Ready {
		t.Fatalf("no ready prometheus in the cluster's state: %+v", saved.Components)
	}
	base := prom.MetricsURL[:len(prom.MetricsURL)-len("/metrics")]

	want := []string{"etcd", "hollow-nodes", "kube-apiserver", "kube-controller-manager", "kube-scheduler"}
	var last string
	for {
		jobs, health, err := promTargets(ctx, base)
		if err == nil && slices.Equal(jobs, want) && health == "up" {
			break
		}
		last = fmt.Sprintf("jobs %v, health %s, err %v", jobs, health, err)
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus never scraped every target: %s", last)
		case <-time.After(time.Second):
		}
	}
	// What was scraped is there to query: the apiserver's requests and the
	// fleet's own nodes.
	for query, atLeast := range map[string]float64{
		`sum(apiserver_request_total{job="kube-apiserver"})`: 1,
		`sum(kscale_fleet_nodes{job="hollow-nodes"})`:        2,
	} {
		v, err := promQuery(ctx, base, query)
		if err != nil || v < atLeast {
			t.Errorf("%s = %v, %v; want at least %v", query, v, err, atLeast)
		}
	}
}

// promTargets returns the jobs of Prometheus' active targets, sorted, and
// "up" when every one was scraped with success, else the first other
// health seen.
func promTargets(ctx context.Context, base string) ([]string, string, error) {
	var v struct {
		Data struct {
			ActiveTargets []struct {
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := promGet(ctx, base+"/api/v1/targets", &v); err != nil {
		return nil, "", err
	}
	health := "up"
	var jobs []string
	for _, t := range v.Data.ActiveTargets {
		if !slices.Contains(jobs, t.Labels["job"]) {
			jobs = append(jobs, t.Labels["job"])
		}
		if t.Health != "up" && health == "up" {
			health = t.Labels["job"] + " " + t.Health + ": " + t.LastError
		}
	}
	sort.Strings(jobs)
	return jobs, health, nil
}

// promQuery returns the value of an instant query with one result.
func promQuery(ctx context.Context, base, query string) (float64, error) {
	var v struct {
		Data struct {
			Result []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := promGet(ctx, base+"/api/v1/query?query="+url.QueryEscape(query), &v); err != nil {
		return 0, err
	}
	if len(v.Data.Result) != 1 || len(v.Data.Result[0].Value) != 2 {
		return 0, fmt.Errorf("%s: %d results", query, len(v.Data.Result))
	}
	s, _ := v.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

func promGet(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
