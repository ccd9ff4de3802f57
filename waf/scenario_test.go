package waf

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

type scenarioFile struct {
	Catalogue bool
	Rules     string
	Case      []struct {
		Name       string
		Method     string
		URI        string
		Headers    [][2]string
		Body       string
		Mode       string
		Paranoia   int
		Threshold  int
		Exclusions []ExclusionConfig
		Action     string
		Rules      []string
	}
}

// TestScenarios runs testdata/scenarios/*.toml: rules + request → verdict.
// A case passes when the action matches and every listed rule matched
// (other rules may match too; an "allow" case with no rules must match none).
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.toml")
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	for _, f := range files {
		var sf scenarioFile
		md, err := toml.DecodeFile(f, &sf)
		if err != nil {
			t.Fatal(err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			t.Fatalf("%s: unknown keys %v", f, und)
		}
		var rs *RuleSet
		if sf.Catalogue {
			rs = loadRules(t)
		} else {
			rs = testRules(t, sf.Rules)
		}
		for _, c := range sf.Case {
			t.Run(filepath.Base(f)+"/"+c.Name, func(t *testing.T) {
				req := getRequest(c.URI)
				req.Method = c.Method
				for _, h := range c.Headers {
					req.Headers = append(req.Headers, Header{Name: h[0], Value: h[1]})
					if strings.EqualFold(h[0], "content-type") {
						req.ContentType = h[1]
					}
				}
				req.Body = []byte(c.Body)
				p := testPolicy(t, PolicyConfig{Mode: c.Mode, Paranoia: c.Paranoia, Threshold: c.Threshold, Exclusions: c.Exclusions})
				v := rs.Evaluate(req, p)
				got := v.RuleIDs(nil)
				if v.Action.String() != c.Action {
					t.Errorf("got action %v (rules %v), want %s", v.Action, got, c.Action)
				}
				for _, id := range c.Rules {
					if !slices.Contains(got, id) {
						t.Errorf("got rules %v, want %s among them", got, id)
					}
				}
				if c.Action == "allow" && len(c.Rules) == 0 && len(got) > 0 {
					t.Errorf("got rules %v, want none", got)
				}
			})
		}
	}
}
