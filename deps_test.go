package edge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowedImports is the import graph of the module, the one table every package directory is
// checked against: for each package (by import path), the edge packages and third-party packages
// its non-test files may import. The standard library is always allowed. An entry allows that
// package and every package below it ("github.com/quic-go/quic-go" allows .../http3). A package
// missing from the table fails TestDepsImports, so a new package, and a new edge between packages,
// is added here deliberately.
//
// The layering it pins (STYLE.md, "Shape of the tree"):
//   - the root package edge is the composition root and may import every capability package;
//   - capability packages are leaves that exchange plain values and do not import each other,
//     except that tls may use fingerprint (capabilityPackages, checked by TestDepsImports);
//   - internal/... packages are shared machinery imported by the root only, unless listed here;
//   - waf/internal/... packages may import only the standard library and be imported only by
//     edge/waf; that rule is generic (wafInternal), so they are not listed, but for the few
//     edges between them (wafInternalImports);
//   - cmd/edge is a thin main over the root; bench/..., fuzz/... and scripts/... are tools and list
//     what they use.
var allowedImports = map[string][]string{
	"edge": {
		"edge/acme",
		"edge/auth",
		"edge/contentcoding",
		"edge/cors",
		"edge/crawler",
		"edge/errorpage",
		"edge/fingerprint",
		"edge/geoip",
		"edge/h2guard",
		"edge/h2server",
		"edge/internal/dirwatch",
		"edge/internal/h2xconnect",
		"edge/internal/handoff",
		"edge/internal/sdnotify",
		"edge/proxyproto",
		"edge/ratelimit",
		"edge/routes",
		"edge/secheaders",
		"edge/ticketkeys",
		"edge/tls",
		"edge/tracing",
		"edge/trust",
		"edge/upstream",
		"edge/waf",
		"github.com/BurntSushi/toml",
		"github.com/prometheus/client_golang",
		"github.com/quic-go/quic-go",
		"golang.org/x/net/http/httpguts",
		"golang.org/x/net/http2",
	},

	// Capability packages: leaves.
	"edge/acme": {
		"github.com/caddyserver/certmagic",
		"github.com/libdns/libdns",
		"github.com/mholt/acmez/v3",
		"github.com/miekg/dns",
		"github.com/redis/go-redis/v9",
		"go.uber.org/zap",
	},
	"edge/auth":          {"github.com/golang-jwt/jwt/v5", "golang.org/x/crypto/argon2", "golang.org/x/crypto/bcrypt"},
	"edge/contentcoding": {"edge/internal/httpfield", "github.com/andybalholm/brotli", "github.com/klauspost/compress"},
	"edge/cors":          nil,
	"edge/crawler":       nil,
	"edge/errorpage":     {"edge/internal/httpfield", "golang.org/x/net/html"},
	"edge/fingerprint":   {"github.com/BurntSushi/toml", "golang.org/x/crypto/cryptobyte"},
	"edge/geoip":         {"github.com/oschwald/maxminddb-golang/v2"},
	"edge/h2guard":       nil,
	// h2server: the framer, HPACK and header-field checks of golang.org/x/net.
	"edge/h2server":   {"golang.org/x/net/http/httpguts", "golang.org/x/net/http2"},
	"edge/secheaders": nil,
	"edge/proxyproto": nil,
	"edge/ratelimit":  {"edge/internal/dirwatch", "github.com/quic-go/quic-go", "github.com/redis/go-redis/v9"},
	"edge/routes":     nil,
	// ticketkeys: the fleet's session ticket keys in Redis; the root hands them to tls.
	"edge/ticketkeys": {"github.com/redis/go-redis/v9"},
	"edge/tls": {
		"edge/fingerprint",
		"edge/internal/dirwatch",
		"golang.org/x/crypto/cryptobyte",
		"golang.org/x/crypto/ocsp",
	},
	// tracing: OpenTelemetry only (the OTLP/HTTP exporter and the SDK); no Prometheus, no other
	// edge package.
	"edge/tracing":  {"go.opentelemetry.io/otel"},
	"edge/trust":    {"github.com/cloudflare/circl/sign/mldsa/mldsa65"},
	"edge/upstream": {"github.com/miekg/dns", "github.com/quic-go/quic-go"},
	"edge/waf":      {"github.com/BurntSushi/toml"},

	// Shared machinery.
	"edge/internal/dirwatch":   {"github.com/fsnotify/fsnotify"},
	"edge/internal/h2xconnect": nil,
	// httpfield: RFC 9110 field-value helpers shared by the header parsers of contentcoding and
	// errorpage.
	"edge/internal/httpfield": nil,
	// handoff passes the listening sockets (and the QUIC connections' UDP flows) to the new
	// process of an upgrade; it is imported by the root and by cmd/edge, which starts the upgrade.
	"edge/internal/handoff": {"github.com/quic-go/quic-go", "golang.org/x/net/ipv4"},
	// sdnotify speaks systemd's notify protocol; imported by the root and by cmd/edge.
	"edge/internal/sdnotify": {"golang.org/x/sys/unix"},

	// The WAF's corpus measurement, used by its floor tests and scripts/waf.
	"edge/waf/quality": {"edge/waf"},
	// Test databases for geoip, imported by tests only (the binary links no mmdbwriter).
	"edge/geoip/geoiptest": {"github.com/maxmind/mmdbwriter"},

	// End-to-end tests: the package itself is only its doc.go; its tests may use anything.
	"edge/e2e": nil,

	// The command.
	"edge/cmd/edge": {"edge", "edge/fingerprint", "edge/internal/handoff", "edge/internal/sdnotify", "edge/tls", "edge/trust", "edge/waf"},

	// Tools.
	"edge/bench/cmd/benchrun":    {"edge/contentcoding", "edge/tls", "github.com/quic-go/quic-go/http3"},
	"edge/bench/cmd/h3load":      {"github.com/quic-go/quic-go"},
	"edge/bench/cmd/hsload":      nil,
	"edge/bench/cmd/olload":      {"github.com/quic-go/quic-go", "golang.org/x/net/http2"},
	"edge/fuzz/gofuzz":           {"edge", "edge/fingerprint", "edge/proxyproto", "edge/ratelimit", "edge/routes", "edge/waf"},
	"edge/scripts/waf/b64frag":   nil,
	"edge/scripts/waf/benigngen": nil,
	"edge/scripts/waf/placement": {"edge/waf/quality"},
	"edge/scripts/waf/quality":   {"edge/waf/quality"},
	"edge/scripts/waf/tables":    {"edge/waf", "edge/waf/quality"},
}

// capabilityPackages are the leaves of the tree. Their entries in allowedImports may name no other
// capability package, but for the exception listed here.
var capabilityPackages = map[string][]string{
	"edge/acme":          nil,
	"edge/auth":          nil,
	"edge/contentcoding": nil,
	"edge/cors":          nil,
	"edge/crawler":       nil,
	"edge/errorpage":     nil,
	"edge/secheaders":    nil,
	"edge/fingerprint":   nil,
	"edge/geoip":         nil,
	"edge/h2guard":       nil,
	"edge/h2server":      nil,
	"edge/proxyproto":    nil,
	"edge/ratelimit":     nil,
	"edge/routes":        nil,
	"edge/ticketkeys":    nil,
	"edge/tls":           {"edge/fingerprint"},
	"edge/tracing":       nil,
	"edge/trust":         nil,
	"edge/upstream":      nil,
	"edge/waf":           nil,
}

// wafInternal is the prefix of the WAF's private packages: standard library only, imported only by
// edge/waf.
const wafInternal = "edge/waf/internal/"

// wafInternalImports are the edges allowed between the WAF's private packages, each with the
// reason; any other import of a waf/internal package by another fails.
var wafInternalImports = map[string][]string{
	// rxlit's required literal sets are in ahocorasick's text model (blank runs as one symbol,
	// the ends of the text as marks), which the WAF's prefilter scans with.
	"edge/waf/internal/rxlit": {"edge/waf/internal/ahocorasick"},
}

// docExempt lists package directories that may keep their package comment outside doc.go, each
// with the reason.
var docExempt = map[string]string{
	// Owned by the WAF restructuring, which no other change edits; its comment is on quality.go.
	"edge/waf/quality": "package comment on quality.go, to move with the waf/ restructuring",
}

// goPackage is one package directory of the module, parsed down to its imports and comments.
type goPackage struct {
	dir   string // slash-separated, relative to the module root; "." for the root
	path  string // import path
	files []*goFile
}

type goFile struct {
	name string // path relative to the module root
	test bool
	ast  *ast.File
}

// modulePackages parses every package directory under the module root: each directory holding a
// .go file, except testdata, hidden and underscore directories and nested modules. Build tags are
// ignored, so every file of every configuration is seen.
func modulePackages(t *testing.T) []*goPackage {
	t.Helper()
	byDir := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		af, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		pkg := byDir[dir]
		if pkg == nil {
			pkg = &goPackage{dir: dir, path: "edge"}
			if dir != "." {
				pkg.path = "edge/" + dir
			}
			byDir[dir] = pkg
		}
		pkg.files = append(pkg.files, &goFile{name: filepath.ToSlash(p), test: strings.HasSuffix(p, "_test.go"), ast: af})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := make([]*goPackage, 0, len(byDir))
	for _, p := range byDir {
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b *goPackage) int { return strings.Compare(a.path, b.path) })
	if len(pkgs) < len(allowedImports)/2 {
		t.Fatalf("found %d package directories; is the test running at the module root?", len(pkgs))
	}
	return pkgs
}

// importPath returns the unquoted path of an import spec.
func importPath(s *ast.ImportSpec) string {
	p, _ := strconv.Unquote(s.Path.Value)
	return p
}

// standard reports whether an import path is in the standard library: its first element has no dot
// and it is not the module's own.
func standard(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".") && first != "edge"
}

// under reports whether p is pkg or a package below it.
func under(p, pkg string) bool {
	return p == pkg || strings.HasPrefix(p, pkg+"/")
}

// TestDepsImports checks every import of every non-test file in the module against
// allowedImports, and the table itself against the layering it stands for.
func TestDepsImports(t *testing.T) {
	pkgs := modulePackages(t)
	seen := map[string]bool{}
	for _, pkg := range pkgs {
		seen[pkg.path] = true
		allowed, listed := allowedImports[pkg.path]
		if !listed && !strings.HasPrefix(pkg.path, wafInternal) {
			t.Errorf("package %s is not in allowedImports: add it with the imports it may use", pkg.path)
			continue
		}
		for _, f := range pkg.files {
			if f.test {
				continue
			}
			for _, imp := range f.ast.Imports {
				p := importPath(imp)
				switch {
				case standard(p):
				case strings.HasPrefix(p, wafInternal):
					if pkg.path != "edge/waf" && !slices.Contains(wafInternalImports[pkg.path], p) {
						t.Errorf("%s imports %s: waf/internal packages are for edge/waf only", f.name, p)
					}
				case strings.HasPrefix(pkg.path, wafInternal):
					t.Errorf("%s imports %s: waf/internal packages use the standard library only", f.name, p)
				case !slices.ContainsFunc(allowed, func(a string) bool { return under(p, a) }):
					t.Errorf("%s imports %s, which allowedImports does not allow for %s", f.name, p, pkg.path)
				}
			}
		}
	}
	for p, imps := range wafInternalImports {
		for _, q := range append([]string{p}, imps...) {
			if !strings.HasPrefix(q, wafInternal) || !seen[q] {
				t.Errorf("wafInternalImports names %s, which is not a waf/internal package of the module", q)
			}
		}
	}
	for p, allowed := range allowedImports {
		if !seen[p] {
			t.Errorf("allowedImports lists %s, which is not a package directory of the module", p)
		}
		for _, a := range allowed {
			if under(a, "edge") && !seen[a] {
				t.Errorf("allowedImports lets %s import %s, which is not a package of the module", p, a)
			}
		}
		if exceptions, leaf := capabilityPackages[p]; leaf {
			for _, a := range allowed {
				if _, other := capabilityPackages[a]; other && !slices.Contains(exceptions, a) {
					t.Errorf("allowedImports lets capability package %s import capability package %s; leaves exchange plain values through the root", p, a)
				}
			}
		}
	}
}

// TestDocComments checks that every package directory has exactly one package comment, in doc.go.
func TestDepsPackageComments(t *testing.T) {
	for _, pkg := range modulePackages(t) {
		if reason, ok := docExempt[pkg.path]; ok {
			t.Logf("%s: exempt (%s)", pkg.path, reason)
			continue
		}
		hasDoc := false
		for _, f := range pkg.files {
			isDoc := path.Base(f.name) == "doc.go"
			hasDoc = hasDoc || isDoc
			switch {
			case isDoc && f.ast.Doc == nil:
				t.Errorf("%s: no package comment", f.name)
			case !isDoc && f.ast.Doc != nil:
				t.Errorf("%s: package comment outside doc.go", f.name)
			}
		}
		if !hasDoc {
			t.Errorf("%s: no doc.go", pkg.dir)
		}
	}
}

// TestStdTLSAlias checks that every file of the module importing crypto/tls, tests included,
// names it stdtls, so "tls" always means edge/tls.
func TestDepsStdTLSAlias(t *testing.T) {
	for _, pkg := range modulePackages(t) {
		for _, f := range pkg.files {
			for _, imp := range f.ast.Imports {
				if importPath(imp) == "crypto/tls" && (imp.Name == nil || imp.Name.Name != "stdtls") {
					t.Errorf(`%s: imports crypto/tls, want stdtls "crypto/tls"`, f.name)
				}
			}
		}
	}
}
