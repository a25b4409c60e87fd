package notrun

import (
	"strings"
	"testing"
)

var needX = Need{What: "X", Enable: "apt-get install -y x", Require: "NOTRUN_TEST_REQUIRE_X"}

// TestSkipAndReport: a test that cannot have what it needs is skipped,
// and the report says which, why, and the command that makes it run.
func TestSkipAndReport(t *testing.T) {
	t.Setenv(needX.Require, "")
	terminal = "" // the person running the tests is not told of this one
	var skipped bool
	t.Run("needs x", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Skip(t, needX, "no x found")
		t.Error("Skip returned")
	})
	if !skipped {
		t.Fatal("the test that needs x was not skipped")
	}
	var b strings.Builder
	if !Report(&b, "here") {
		t.Fatal("Report says every test ran")
	}
	for _, s := range []string{"NOT RUN in here: 1 tests that need X: no x found: TestSkipAndReport/needs_x", "to run them: apt-get install -y x", needX.Require + "=1"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the report does not say %q:\n%s", s, b.String())
		}
	}
	mu.Lock()
	clear(notRun)
	mu.Unlock()
	if Report(&b, "here") {
		t.Error("Report, every test run, says otherwise")
	}
}
