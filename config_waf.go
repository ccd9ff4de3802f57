package edge

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sync"

	"edge/routes"
	"edge/trust"
	"edge/waf"
)

// builtinWAFRules is the repository's rule catalogue, built into the binary: it is used when
// waf.rules_dir is not set, so an edge with no configuration at all is still protected.
//
//go:embed rules/waf/*.toml
var builtinWAFRules embed.FS

// RouteWAF is a route's [routes.waf] table: it overrides the WAF mode and adds exclusions for the
// route.
type RouteWAF struct {
	// Mode is "off", "detect" or "block"; "" keeps waf.mode.
	Mode string `toml:"mode"`
	// Exclusions are added to waf.exclusions for this route.
	Exclusions []waf.ExclusionConfig `toml:"exclusions"`
}

// builtinRuleSet is the built-in catalogue compiled, once per process: it is immutable (a RuleSet
// holds no per-server state), so every configuration without waf.rules_dir shares it.
var builtinRuleSet = sync.OnceValues(func() (*waf.RuleSet, error) {
	input, err := readBuiltinRules()
	if err != nil {
		return nil, err
	}
	return compileRules(input)
})

// ruleFile is one WAF rule file as read (and, with trusted keys, verified).
type ruleFile struct {
	name string
	data []byte
}

func readBuiltinRules() ([]ruleFile, error) {
	names, err := fs.Glob(builtinWAFRules, "rules/waf/*.toml")
	if err != nil {
		return nil, err
	}
	input := make([]ruleFile, 0, len(names))
	for _, name := range names {
		data, err := builtinWAFRules.ReadFile(name)
		if err != nil {
			return nil, err
		}
		input = append(input, ruleFile{"(built-in) " + name, data})
	}
	return input, nil
}

// compileRules parses every rule file and compiles the rules into one set.
func compileRules(input []ruleFile) (*waf.RuleSet, error) {
	var (
		rules []*waf.Rule
		errs  []error
	)
	for _, f := range input {
		rs, err := waf.Parse(f.name, f.data)
		if err != nil {
			errs = append(errs, err)
		}
		rules = append(rules, rs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return waf.NewRuleSet(rules)
}

// loadWAFRules reads every rule file of dir (through the verifier, so with trusted keys every file
// must be signed), or takes the built-in catalogue when dir is "", and compiles them into one rule
// set. When prev (the configuration being replaced, or nil) compiled the very same files, its rule
// set is taken over: a reload that leaves the rule files unchanged (a config or fingerprint
// database change) does not rebuild the WAF. It returns the set, the digest of its files and the
// paths to watch.
func loadWAFRules(dir string, v *trust.Verifier, prev *wafEngine) (*waf.RuleSet, [sha256.Size]byte, []string, error) {
	var digest [sha256.Size]byte
	if dir == "" {
		set, err := builtinRuleSet()
		return set, digest, nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, digest, nil, err
	}
	files := []string{dir}
	if len(names) == 0 {
		return nil, digest, files, fmt.Errorf("%s: no *.toml rule files", dir)
	}
	slices.Sort(names)
	var (
		input []ruleFile
		errs  []error
	)
	for _, name := range names {
		data, err := v.ReadFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		input = append(input, ruleFile{name, data})
	}
	if len(errs) > 0 {
		return nil, digest, files, errors.Join(errs...)
	}
	h := sha256.New()
	for _, f := range input {
		h.Write([]byte(f.name))
		h.Write([]byte{0})
		h.Write(f.data)
		h.Write([]byte{0})
	}
	h.Sum(digest[:0])
	if prev != nil && prev.rules != nil && prev.digest == digest {
		return prev.rules, digest, files, nil
	}
	set, err := compileRules(input)
	return set, digest, files, err
}

// wafPolicies compiles the global WAF policy and each route's variant, by route index.
func (c *Config) wafPolicies() (*waf.Policy, []*waf.Policy, error) {
	base, err := c.WAF.Policy()
	if err != nil {
		return nil, nil, err
	}
	per := make([]*waf.Policy, len(c.Routes))
	for i, r := range c.Routes {
		if r.WAF == nil {
			per[i] = base
			continue
		}
		p, err := base.WithRoute(r.WAF.Mode, r.WAF.Exclusions)
		if err != nil {
			return nil, nil, err
		}
		per[i] = p
	}
	return base, per, nil
}

// wafEngine is the compiled WAF of a snapshot: the rules and the policies.
type wafEngine struct {
	rules    *waf.RuleSet
	digest   [sha256.Size]byte // of waf.rules_dir's files, zero for the built-in catalogue
	global   *waf.Policy
	perRoute []*waf.Policy
}

func (e *wafEngine) policy(rt *routes.Compiled) *waf.Policy {
	if rt != nil && rt.Index < len(e.perRoute) {
		return e.perRoute[rt.Index]
	}
	return e.global
}

// evaluate is the one WAF evaluation of edge: the live pipeline (H1, H2, H3) and `edge waf eval`
// both call it. It builds the WAF's view of the request from the canonical path, the inspected body
// prefix and the connection facts, and evaluates the rules under the route's policy.
func (e *wafEngine) evaluate(r *http.Request, canonicalPath string, body []byte, truncated bool, conn waf.Conn, p *waf.Policy) waf.Verdict {
	var req waf.Request
	waf.FillFromHTTP(&req, r, canonicalPath, body, truncated, conn)
	return e.rules.Evaluate(&req, p)
}
