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

func TestStatusKB(t *testing.T) {
	status := []byte("Name:\tx\nVmPeak:\t  999 kB\nVmRSS:\t   2048 kB\nRssAnon:\t 1536 kB\nRssFile:\t  512 kB\nThreads: 3\nBad:\t12 pages\n")
	for _, tc := range []struct {
		field   string
		want    uint64
		wantErr bool
	}{
		{field: "VmRSS", want: 2048 * 1024},
		{field: "RssAnon", want: 1536 * 1024},
		{field: "RssFile", want: 512 * 1024},
		{field: "Rss", wantErr: true}, // a prefix of other fields is not one
		{field: "Bad", wantErr: true},
		{field: "RssShmem", wantErr: true},
	} {
		got, err := statusKB(status, tc.field)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("statusKB(%s) = %d, %v; want %d, error %v", tc.field, got, err, tc.want, tc.wantErr)
		}
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
	if b.RSS == 0 || b.RSSAnon == 0 || b.RSSFile == 0 || b.RSSAnon+b.RSSFile > b.RSS {
		t.Errorf("RSS %d of a running test: anon %d, file %d", b.RSS, b.RSSAnon, b.RSSFile)
	}
	u := Between(a, b)
	if u.Cores <= 0 || u.Cores > 4 {
		t.Errorf("cores = %v after a busy loop, want in (0, 4]", u.Cores)
	}
	if _, err := Read(1 << 30); err == nil {
		t.Error("reading a pid that cannot exist succeeded")
	}
}
