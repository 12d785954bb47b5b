package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		{
			name: "plain name",
			stat: "1234 (kubemark) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 12 0 100 0 0",
			want: 3800 * time.Millisecond,
		},
		{
			name: "name with spaces and parentheses",
			stat: "42 (a) b (c)) R 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0",
			want: 100 * time.Millisecond,
		},
		{name: "truncated", stat: "42 (x) R 1 2 3", wantErr: true},
		{name: "no name", stat: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("cpu = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRSS(t *testing.T) {
	got, err := parseRSS([]byte("Name:\tx\nVmPeak:\t  999 kB\nVmRSS:\t   2048 kB\nThreads: 3\n"))
	if err != nil || got != 2048*1024 {
		t.Fatalf("parseRSS = %d, %v; want %d", got, err, 2048*1024)
	}
	if _, err := parseRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Fatal("want an error without VmRSS")
	}
}

func TestReadSelfAndBetween(t *testing.T) {
	a, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn some CPU so the second sample differs.
	deadline := time.Now().Add(50 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	b, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if b.RSS == 0 {
		t.Error("RSS of a running test is 0")
	}
	u := Between(a, b)
	if u.Cores <= 0 || u.Cores > 4 {
		t.Errorf("cores = %v after a busy loop, want in (0, 4]", u.Cores)
	}
	if _, err := Read(1 << 30); err == nil {
		t.Error("reading a pid that cannot exist succeeded")
	}
}
