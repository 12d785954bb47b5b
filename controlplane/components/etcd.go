package components

import (
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd server until SIGTERM or SIGINT.
func runEtcd(args []string) int {
	fs := pflag.NewFlagSet("etcd", pflag.ContinueOnError)
	dataDir := fs.String("data-dir", "", "etcd data folder")
	clientURL := fs.String("listen-client-url", "http://127.0.0.1:2379", "URL serving clients and /metrics")
	peerURL := fs.String("listen-peer-url", "http://127.0.0.1:2380", "URL for peer traffic (unused by a single member, but etcd requires one)")
	noFsync := fs.Bool("unsafe-no-fsync", false, "disable fsync: faster, loses data on a machine crash")
	quota := fs.Int64("quota-backend-bytes", 8<<30, "backend size quota; 8 GiB as large test clusters use")
	logLevel := fs.String("log-level", "warn", "etcd log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		return 2
	}
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}
	cu, err := url.Parse(*clientURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-client-url: %v\n", err)
		return 2
	}
	pu, err := url.Parse(*peerURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --listen-peer-url: %v\n", err)
		return 2
	}

	cfg := embed.NewConfig()
	cfg.Name = "kscale"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = *noFsync
	cfg.QuotaBackendBytes = *quota
	// /debug/pprof on the client URL (loopback only), as kube-apiserver
	// serves its own: what the profile measurements read.
	cfg.EnablePprof = true
	cfg.LogLevel = *logLevel
	cfg.Logger = "zap"
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: starting: %v\n", err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", cu)
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		e.Close()
		return 1
	case <-time.After(time.Minute):
		fmt.Fprintln(os.Stderr, "etcd: not ready after 1m")
		e.Close()
		return 1
	case <-stop:
		e.Close()
		return 0
	}
	select {
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		e.Close()
		return 1
	case <-stop:
		e.Close()
		return 0
	}
}
