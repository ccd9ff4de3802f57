package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// arm is one proxy under test.
type arm struct {
	name    string // edge-lean, edge-full, haproxy, nginx, caddy
	label   string // as shown in tables
	kind    string // edge, haproxy, nginx, caddy
	https   string // TLS over TCP (and QUIC where h3)
	http    string // cleartext
	admin   string // edge only
	h3      bool   // serves HTTP/3
	version string
	svc     *service
	conf    *edgeConfig // edge arms only
}

// bench is the state of one harness run.
type bench struct {
	mode                  string
	repo                  string
	dir                   string // work directory (configs, logs, cert, bodies)
	out                   string // results directory
	edgeBin               string
	h3load                string
	hsload                string
	olload                string
	openLoop              bool
	edgeSource            string // how the edge binary was obtained
	commitAtStart         string // commit() as read when the run started
	rounds                int
	dur                   time.Duration
	hsDur                 time.Duration
	profDur               time.Duration // perf record run per protocol
	cells                 []cell
	arms                  []*arm
	origin                *service
	samples               []sample
	hs                    []hsSample
	extras                []extraSample
	profiles              []profile
	instr                 []instrSample
	ol                    []olSample  // open-loop runs (titanium.go)
	olMax                 []olMax     // highest sustained rate per arm and protocol
	mem                   []memSample // memory with idle connections and under load
	notes                 []string
	compression           string // the response-compression section (compression.go)
	started               time.Time
	loadBefore, loadAfter string
}

func (b *bench) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.notes = append(b.notes, msg)
	fmt.Fprintln(os.Stderr, "benchrun: note:", msg)
}

func (b *bench) arm(name string) *arm {
	for _, a := range b.arms {
		if a.name == name {
			return a
		}
	}
	return nil
}

func main() {
	b := &bench{started: time.Now().UTC()}
	flag.StringVar(&b.mode, "mode", "quick", "quick (< 10 min) or full")
	flag.StringVar(&b.repo, "repo", "..", "repository root")
	flag.StringVar(&b.dir, "work", "/dev/shm/edge-bench", "work directory (tmpfs: bodies are served from memory)")
	flag.StringVar(&b.out, "out", "results", "results directory")
	flag.StringVar(&b.edgeBin, "edge", "", "edge binary")
	flag.StringVar(&b.h3load, "h3load", "", "h3load binary")
	flag.StringVar(&b.hsload, "hsload", "", "hsload binary")
	flag.StringVar(&b.olload, "olload", "", "olload binary (the open-loop section)")
	flag.BoolVar(&b.openLoop, "open-loop", true, "run the open-loop section: latency at fixed rates, highest sustained rate, memory with idle connections")
	flag.StringVar(&b.edgeSource, "edge-source", "", "how the edge binary was obtained (shown in latest.md)")
	rounds := flag.Int("rounds", 0, "rounds (0: 3 quick, 5 full)")
	hsDur := flag.Duration("hs-d", 0, "run time per handshake target (0: 1s quick, 3s full)")
	dur := flag.Duration("d", 0, "run time per arm and cell (0: 1.5s quick, 5s full)")
	only := flag.String("cells", "", "comma-separated cell keys to run (e.g. h1tls/56,h3/56); empty: the mode's set")
	compressionOnly := flag.Bool("compression-only", false, "measure only the response-compression section and splice it into -out/latest.md")
	flag.Parse()
	if *compressionOnly {
		if err := runCompressionOnly(b.repo, b.out); err != nil {
			fatal(err)
		}
		return
	}
	if b.mode != "quick" && b.mode != "full" {
		fatal(fmt.Errorf("benchrun: -mode must be quick or full, got %q", b.mode))
	}
	for _, p := range []*string{&b.repo, &b.dir, &b.out, &b.edgeBin, &b.h3load, &b.hsload, &b.olload} {
		if *p == "" {
			fatal(fmt.Errorf("benchrun: -edge, -h3load, -hsload and -olload are required"))
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}
	b.rounds, b.dur, b.hsDur, b.profDur = 3, 1500*time.Millisecond, time.Second, 2*time.Second
	if b.mode == "full" {
		b.rounds, b.dur, b.hsDur, b.profDur = 5, 5*time.Second, 3*time.Second, 5*time.Second
	}
	if *rounds > 0 {
		b.rounds = *rounds
	}
	if *dur > 0 {
		b.dur = *dur
	}
	if *hsDur > 0 {
		b.hsDur = *hsDur
	}
	b.cells = cellsFor(b.mode)
	if *only != "" {
		var keep []cell
		for _, c := range allCells() {
			for _, k := range strings.Split(*only, ",") {
				if c.key() == k {
					keep = append(keep, c)
				}
			}
		}
		b.cells = keep
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		b.stopAll()
		fmt.Fprintln(os.Stderr, "benchrun: interrupted")
		os.Exit(130)
	}()
	err := b.run()
	b.stopAll()
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func (b *bench) stopAll() {
	for _, a := range b.arms {
		a.svc.stop()
	}
	b.origin.stop()
}

func (b *bench) run() error {
	b.loadBefore = loadavg()
	b.commit()
	if err := b.setup(); err != nil {
		return err
	}
	if err := b.startAll(); err != nil {
		return err
	}
	if err := b.guards(); err != nil {
		return err
	}
	if err := b.measure(); err != nil {
		return err
	}
	if err := b.handshakes(); err != nil {
		return err
	}
	if b.openLoop {
		if err := b.openLoopSection(); err != nil {
			return err
		}
	}
	if b.mode == "full" {
		if err := b.fullExtras(); err != nil {
			return err
		}
	}
	b.profile()
	if b.mode == "full" {
		b.callgrind()
	}
	if s, err := compressionSection(b.repo, b.commit()); err != nil {
		b.note("response compression not measured: %v", err)
	} else {
		b.compression = s
	}
	b.loadAfter = loadavg()
	return b.writeResults()
}

// setup creates the work directory, the certificate, the bodies and every
// arm's configuration.
func (b *bench) setup() error {
	os.RemoveAll(b.dir)
	for _, d := range []string{b.dir, filepath.Join(b.dir, "tmp-origin"), filepath.Join(b.dir, "tmp-nginx"), b.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := writeCert(b.dir); err != nil {
		return err
	}
	if err := writeBodies(b.dir); err != nil {
		return err
	}
	b.arms = []*arm{
		{name: "edge-lean", label: "edge lean", kind: "edge", https: "127.0.0.1:18443", http: "127.0.0.1:18080", admin: "127.0.0.1:19901", h3: true},
		{name: "edge-full", label: "edge full", kind: "edge", https: "127.0.0.1:18444", http: "127.0.0.1:18081", admin: "127.0.0.1:19902", h3: true},
		{name: "haproxy", label: "HAProxy", kind: "haproxy", https: "127.0.0.1:18445", http: "127.0.0.1:18082"},
		{name: "nginx", label: "nginx", kind: "nginx", https: "127.0.0.1:18446", http: "127.0.0.1:18083"},
		{name: "caddy", label: "Caddy", kind: "caddy", https: "127.0.0.1:18447", http: "127.0.0.1:18084", h3: true},
	}
	cfgDir := filepath.Join(b.repo, "bench", "configs")
	lean := filepath.Join(cfgDir, "edge-lean.toml")
	full := filepath.Join(cfgDir, "edge-full.toml")
	var err error
	if b.arms[0].conf, err = buildEdgeConfig(b.edgeBin, b.dir, b.repo, b.arms[0], lean); err != nil {
		return err
	}
	if b.arms[1].conf, err = buildEdgeConfig(b.edgeBin, b.dir, b.repo, b.arms[1], lean, full); err != nil {
		return err
	}
	for _, a := range b.arms[:2] {
		for _, d := range a.conf.dropped {
			b.note("%s: config section dropped, edge does not accept it yet: %s", a.label, d)
		}
	}
	if strings.Join(b.arms[0].conf.accepted, ",") == strings.Join(b.arms[1].conf.accepted, ",") && !contains(b.arms[1].conf.accepted, "waf") {
		b.note("edge full is NOT the full security stack in this run: edge accepted only %v of edge-full.toml's sections, so edge full ≈ edge lean", b.arms[1].conf.accepted)
	}
	files := map[string]string{
		"origin.conf": originConf(b.dir),
		"haproxy.cfg": haproxyConf(b.dir, b.arm("haproxy")),
		"nginx.conf":  nginxConf(b.dir, b.arm("nginx")),
		"Caddyfile":   caddyConf(b.dir, b.arm("caddy")),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(b.dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	b.arm("edge-lean").version = cmdFirstLine(b.edgeBin, "--version")
	b.arm("edge-lean").version += " at commit " + b.commit()
	b.arm("edge-full").version = b.arm("edge-lean").version
	b.arm("haproxy").version = cmdFirstLine("haproxy", "-v")
	b.arm("nginx").version = cmdFirstLine("nginx", "-v")
	b.arm("caddy").version = cmdFirstLine("caddy", "version")
	return nil
}

// startAll starts the origin on CPU 1 and every arm on CPU 0.
func (b *bench) startAll() error {
	addrs := []string{originAddr}
	for _, a := range b.arms {
		addrs = append(addrs, a.https, a.http)
		if a.admin != "" {
			addrs = append(addrs, a.admin)
		}
	}
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("benchrun: %s is already in use by another process; stop it first (ss -ltnp)", addr)
		}
		ln.Close()
	}
	var err error
	b.origin, err = startPinned("origin", "1", filepath.Join(b.dir, "origin.log"), nil, "nginx", "-c", filepath.Join(b.dir, "origin.conf"), "-e", filepath.Join(b.dir, "origin-error.log"))
	if err != nil {
		return err
	}
	if err := waitTCP(b.origin, originAddr, 10*time.Second); err != nil {
		return err
	}
	for _, a := range b.arms {
		argv, env := b.armCommand(a)
		if a.svc, err = startPinned(a.name, "0", filepath.Join(b.dir, a.name+".log"), env, argv...); err != nil {
			return err
		}
	}
	for _, a := range b.arms {
		for _, addr := range []string{a.https, a.http} {
			if err := waitTCP(a.svc, addr, 20*time.Second); err != nil {
				return err
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // let QUIC listeners come up too
	return nil
}

// armCommand returns the command line and extra environment of an arm: one
// worker or thread each (GOMAXPROCS=1 for the Go proxies), in the foreground.
func (b *bench) armCommand(a *arm) (argv, env []string) {
	goEnv := []string{"GOMAXPROCS=1", "HOME=" + b.dir, "XDG_DATA_HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
	switch a.kind {
	case "edge":
		return []string{b.edgeBin, "--config", a.conf.path}, goEnv
	case "haproxy":
		return []string{"haproxy", "-db", "-f", filepath.Join(b.dir, "haproxy.cfg")}, nil
	case "nginx":
		return []string{"nginx", "-c", filepath.Join(b.dir, "nginx.conf"), "-e", filepath.Join(b.dir, "nginx-error.log")}, nil
	default:
		return []string{"caddy", "run", "--config", filepath.Join(b.dir, "Caddyfile"), "--adapter", "caddyfile"}, goEnv
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func cmdFirstLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return "unknown (" + err.Error() + ")"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// allCells lists every cell of the full mode.
func allCells() []cell {
	var cs []cell
	for _, p := range []string{protoH1C, protoH1TLS, protoH2TLS, protoH3} {
		for _, body := range []string{"56", "1k", "64k", "post"} {
			cs = append(cs, cell{p, body})
		}
	}
	return cs
}

// cellsFor returns the cells measured in a mode: quick keeps the 56 B GET on
// every protocol, plus 1 KiB, 64 KiB and the POST on the TLS protocols the
// goals are stated for.
func cellsFor(mode string) []cell {
	if mode == "full" {
		return allCells()
	}
	return []cell{
		{protoH1C, "56"}, {protoH1TLS, "56"}, {protoH2TLS, "56"}, {protoH3, "56"},
		{protoH1TLS, "1k"}, {protoH2TLS, "64k"}, {protoH1TLS, "post"},
	}
}
