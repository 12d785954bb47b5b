package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kscale/kscale/framework/report/htmlcheck"
)

func TestReportInChromium(t *testing.T) {
	bin, err := htmlcheck.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, err := WriteHTML(dir, reportFixture())
	if err != nil {
		t.Fatal(err)
	}

	// The detector first: a copy of the report that tries to run a script
	// and fetch an image must be caught, or a clean run below proves
	// nothing (a Chromium that stopped logging the console would pass).
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "</main>",
		`<img src="https://example.invalid/pixel.png"><script>notDefined()</script></main>`, 1)
	badPath := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(badPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, console, err := htmlcheck.Load(bin, badPath, t.TempDir(), "--dump-dom")
	if err != nil {
		t.Fatal(err)
	}
	if len(console) < 2 || !strings.Contains(strings.Join(console, "\n"), "Content Security Policy") {
		t.Fatalf("Chromium did not report the blocked script and image of %s (console lines %q): the console check would be blind", badPath, console)
	}

	// The fixture's run is violated: its badge is red. KSCALE_KEEP_SCREENSHOT
	// keeps the picture for a person to look at.
	shot := filepath.Join(dir, "report.png")
	if keep := os.Getenv("KSCALE_KEEP_SCREENSHOT"); keep != "" {
		shot = keep
	}
	if err := htmlcheck.Report(path, len(reportFixture().Measurements), htmlcheck.RedBadge, shot); err != nil {
		t.Fatal(err)
	}
}
