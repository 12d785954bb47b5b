package procstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOOMKills(t *testing.T) {
	cases := []struct {
		name    string
		cgroup  string            // /proc/<pid>/cgroup
		files   map[string]string // under /sys/fs/cgroup
		want    uint64
		wantDir string
		wantErr string
	}{
		{"v2", "0::/user.slice/kscale\n", map[string]string{"user.slice/kscale/memory.events": "low 0\nhigh 0\nmax 2\noom 2\noom_kill 2\n"}, 2, "user.slice/kscale", ""},
		{"v1", "4:memory:/process_api/abc\n0::/\n", map[string]string{"memory/process_api/abc/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"}, 3, "memory/process_api/abc", ""},
		{"v1 with joined controllers", "5:cpu,memory:/x\n", map[string]string{"memory/x/memory.oom_control": "oom_kill 1\n"}, 1, "memory/x", ""},
		{"hybrid: v2 under unified", "0::/y\n", map[string]string{"unified/y/memory.events": "oom_kill 4\n"}, 4, "unified/y", ""},
		{"no counter", "0::/z\n", map[string]string{"z/memory.events": "oom 0\n"}, 0, "", "has no oom_kill counter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			proc, sys := filepath.Join(root, "proc"), filepath.Join(root, "sys")
			write := func(path, body string) {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(proc, "42", "cgroup"), tc.cgroup)
			for p, body := range tc.files {
				write(filepath.Join(sys, p), body)
			}
			got, dir, err := oomKills(proc, sys, 42)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || dir != filepath.Join(sys, tc.wantDir) {
				t.Fatalf("%d %s %v, want %d %s", got, dir, err, tc.want, tc.wantDir)
			}
		})
	}
}
