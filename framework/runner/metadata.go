package runner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kscale/kscale/framework/config"
	"github.com/kscale/kscale/framework/report"
	"github.com/kscale/kscale/kubemark/stamp"
)

// metadata tells what makes the run comparable with others, and where it
// came from: kscale's build, the workload's hash, the machine, the CI
// build. getenv reads the CI's variables.
func metadata(o Options, c *config.Compiled, getenv func(string) string) *report.Metadata {
	m := &report.Metadata{
		Overrides:  o.Overrides,
		ConfigHash: configHash(c),
		Machine:    report.Machine{Cores: runtime.NumCPU(), MemoryBytes: memTotal(), OS: runtime.GOOS + "/" + runtime.GOARCH},
		CI:         ciBuild(o.CIJob, o.CIBuild, getenv),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		m.KscaleVersion = info.Main.Version
		m.KscaleCommit = stamp.Revision(info)
	}
	if m.KscaleCommit == "" {
		// go test and ginkgo build without VCS stamps: ask the checkout
		// the suite runs in.
		m.KscaleCommit = checkoutCommit()
	}
	return m
}

// configHash is the SHA-256 of the compiled config and of every object
// template it names, in a stable order.
func configHash(c *config.Compiled) string {
	h := sha256.New()
	h.Write(c.YAML)
	var templates []string
	for _, step := range c.Config.Steps {
		for _, ph := range step.Phases {
			for _, obj := range ph.ObjectBundle {
				if obj.ObjectTemplatePath != "" && !slices.Contains(templates, obj.ObjectTemplatePath) {
					templates = append(templates, obj.ObjectTemplatePath)
				}
			}
		}
	}
	slices.Sort(templates)
	for _, t := range templates {
		path := t
		if !filepath.IsAbs(path) {
			path = filepath.Join(c.Dir, t)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			data = []byte("unreadable")
		}
		h.Write([]byte("\x00" + t + "\x00"))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ciBuild is the CI job and build: the flags' when given, else Prow's
// (JOB_NAME, BUILD_ID) or GitHub Actions' (workflow and job, run id and
// attempt); nil outside CI.
func ciBuild(job, build string, getenv func(string) string) *report.CI {
	switch {
	case job != "" || build != "":
		return &report.CI{System: "flags", Job: job, Build: build}
	case getenv("PROW_JOB_ID") != "" || (getenv("JOB_NAME") != "" && getenv("BUILD_ID") != ""):
		return &report.CI{System: "prow", Job: getenv("JOB_NAME"), Build: getenv("BUILD_ID")}
	case getenv("GITHUB_ACTIONS") == "true":
		ci := &report.CI{System: "github-actions", Job: getenv("GITHUB_WORKFLOW"), Build: getenv("GITHUB_RUN_ID")}
		if j := getenv("GITHUB_JOB"); j != "" {
			ci.Job += "/" + j
		}
		if a := getenv("GITHUB_RUN_ATTEMPT"); a != "" && a != "1" {
			ci.Build += "-" + a
		}
		if srv, repo := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"); srv != "" && repo != "" {
			ci.URL = srv + "/" + repo + "/actions/runs/" + getenv("GITHUB_RUN_ID")
		}
		return ci
	}
	return nil
}

// memTotal is the machine's memory, from /proc/meminfo; 0 when unknown.
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// checkoutCommit is the commit of the git checkout around the working
// folder, "-dirty" when tracked files changed; empty outside one.
func checkoutCommit() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "-dirty"
	}
	return rev
}
