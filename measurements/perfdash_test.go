package measurements

import (
	"testing"

	"github.com/kscale/kscale/framework/report/perfdashcheck"
)

// perfdashReads checks that s's report file parses with every parser
// perfdash gives its name, and returns what each took.
func perfdashReads(t *testing.T, s Summary) []perfdashcheck.Result {
	t.Helper()
	parsers := perfdashcheck.Parsers(s.FileName())
	if len(parsers) == 0 {
		t.Fatalf("perfdash reads no summary named %q", s.FileName())
	}
	body, ok, err := s.ReportFile()
	if err != nil || !ok {
		t.Fatalf("%s: no report file (%v)", s.FileName(), err)
	}
	var out []perfdashcheck.Result
	for _, p := range parsers {
		res, err := perfdashcheck.Parse(p, body)
		if err != nil {
			t.Fatalf("%s by %s: %v\n%s", s.FileName(), p, err, body)
		}
		out = append(out, res)
	}
	return out
}
