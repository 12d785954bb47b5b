package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/kscale/kscale/measurements"
)

// ParseFleet checks a --fleet value: the base URL of a hollow-node fleet's
// HTTP endpoint (its --fleet-metrics-bind-address), e.g.
// http://127.0.0.1:10269.
func ParseFleet(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--fleet %q: want the fleet's endpoint URL, e.g. http://127.0.0.1:10269", raw)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// fleetComponents are the fleets as processes whose usage the run reports.
func fleetComponents(fleets []string) []measurements.Component {
	out := make([]measurements.Component, len(fleets))
	for i, base := range fleets {
		out[i] = measurements.Component{Name: fmt.Sprintf("fleet-%d", i+1), MetricsURL: base + "/metrics", HealthURL: base + "/healthz"}
	}
	return out
}

// fleetFailer fails and recovers hollow nodes through the fleets that run
// them (POST /fail?nodes=, /recover?nodes=), for the config's chaosMonkey.
// A fleet refuses names it does not run, so the owner of a node is found by
// asking each fleet in turn and remembered.
type fleetFailer struct {
	fleets []string
	client *http.Client

	mu    sync.Mutex
	owner map[string]string
}

func newFleetFailer(fleets []string) *fleetFailer {
	return &fleetFailer{fleets: fleets, client: http.DefaultClient, owner: map[string]string{}}
}

func (f *fleetFailer) Fail(ctx context.Context, nodes []string) ([]string, error) {
	return f.each(ctx, "/fail", nodes)
}

func (f *fleetFailer) Recover(ctx context.Context, nodes []string) error {
	_, err := f.each(ctx, "/recover", nodes)
	return err
}

// each sends path for every node to its fleet: known owners in one request
// per fleet, unknown nodes one by one until a fleet takes them. It returns
// the nodes done, and goes on past a node no fleet runs.
func (f *fleetFailer) each(ctx context.Context, path string, nodes []string) ([]string, error) {
	byFleet := map[string][]string{}
	var unknown []string
	f.mu.Lock()
	for _, n := range nodes {
		if fleet, ok := f.owner[n]; ok {
			byFleet[fleet] = append(byFleet[fleet], n)
		} else {
			unknown = append(unknown, n)
		}
	}
	f.mu.Unlock()
	var done []string
	var errs []error
	for fleet, names := range byFleet {
		if _, err := f.post(ctx, fleet, path, names); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, names...)
	}
	for _, n := range unknown {
		taken := false
		var askErr error
		for _, fleet := range f.fleets {
			ok, err := f.post(ctx, fleet, path, []string{n})
			if err != nil {
				askErr = err
				break
			}
			if ok {
				f.mu.Lock()
				f.owner[n] = fleet
				f.mu.Unlock()
				taken = true
				break
			}
		}
		switch {
		case taken:
			done = append(done, n)
		case askErr != nil:
			errs = append(errs, askErr)
		default:
			errs = append(errs, fmt.Errorf("node %s is in none of the fleets %v", n, f.fleets))
		}
	}
	return done, errors.Join(errs...)
}

// post asks one fleet; false (and no error) when the fleet does not run
// one of the nodes.
func (f *fleetFailer) post(ctx context.Context, fleet, path string, nodes []string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fleet+path+"?nodes="+url.QueryEscape(strings.Join(nodes, ",")), nil)
	if err != nil {
		return false, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("fleet %s: %w", fleet, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusOK:
		return true, nil
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "in this fleet"):
		return false, nil
	default:
		return false, fmt.Errorf("fleet %s%s: %s: %s", fleet, path, resp.Status, strings.TrimSpace(string(body)))
	}
}
