package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"edge"
	"edge/internal/handoff"
	"edge/internal/sdnotify"
)

// version and commit are set at build time with -ldflags "-X main.version=... -X main.commit=...";
// without commit, `edge version` reports the VCS revision Go recorded in the binary, if any.
var (
	version = "dev"
	commit  = ""
)

// Exit codes.
const (
	exitOK      = 0
	exitInvalid = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if sub := findSubcommand(args[0]); sub != nil {
			return sub.run(args[1:], stdin, stdout, stderr)
		}
		if args[0] == "help" {
			usage(stdout, nil)
			return exitOK
		}
	}
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr) // parse errors; the usage goes to stdout or stderr by the case, below
	configPath := fs.String("config", "", "configuration file (default ./edge.toml if present, else the built-in default)")
	validate := fs.Bool("validate", false, "check the configuration and everything it points to, then exit (0 valid, 1 invalid)")
	asJSON := fs.Bool("json", false, "with --validate: print problems as a JSON array on stdout")
	showVersion := fs.Bool("version", false, "print the version and exit")
	// Usage errors print the usage on stderr; --help prints it on stdout and exits 0.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return exitOK
		}
		usage(stderr, fs)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "edge: unexpected argument %q\n", fs.Arg(0))
		usage(stderr, fs)
		return exitUsage
	}
	if *showVersion {
		fmt.Fprintf(stdout, "edge %s\n", version)
		return exitOK
	}
	if *asJSON && !*validate {
		fmt.Fprintln(stderr, "edge: --json goes with --validate")
		return exitUsage
	}

	cfg, problems := loadConfig(*configPath)
	if *validate {
		return reportValidation(problems, *asJSON, stdout, stderr)
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, p.String())
	}
	if problems.HasErrors() || cfg == nil {
		fmt.Fprintln(stderr, "edge: invalid configuration")
		return exitInvalid
	}
	return serve(cfg, stderr)
}

// usage writes edge's usage: how to run it, its flags (when fs is set) and every subcommand.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: edge [--config FILE]                      run the proxy
       edge --validate [--config FILE] [--json]  check a configuration, exit 0 (valid), 1 (invalid)
       edge --version
`)
	if fs != nil {
		fmt.Fprintln(w, "\nflags:")
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
	}
	fmt.Fprintln(w, "\nsubcommands:")
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  edge %s\n      %s\n", strings.TrimSpace(sc.name+" "+sc.args), sc.what)
	}
	fmt.Fprint(w, `
signals: SIGHUP reloads, SIGUSR2 upgrades the binary in place (listening sockets are handed to a new
edge process, which takes over once ready; this one drains), SIGTERM or SIGINT drains and exits.
`)
}

// loadConfig picks the configuration: --config, else ./edge.toml, else the built-in default.
func loadConfig(path string) (*edge.Config, edge.Problems) { return loadConfigWith(path, nil) }

func loadConfigWith(path string, override func(*edge.Config)) (*edge.Config, edge.Problems) {
	opts := edge.LoadOptions{Override: override}
	if path != "" {
		return edge.LoadFileWith(path, opts)
	}
	if _, err := os.Stat("edge.toml"); err == nil {
		return edge.LoadFileWith("edge.toml", opts)
	}
	return edge.LoadWith(edge.DefaultConfigName, edge.DefaultConfigTOML, opts)
}

func reportValidation(problems edge.Problems, asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		stdout.Write(problems.JSON())
	} else {
		for _, p := range problems {
			fmt.Fprintln(stderr, p.String())
		}
	}
	errs, warns := 0, 0
	for _, p := range problems {
		if p.Severity == edge.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	if errs > 0 {
		fmt.Fprintf(stderr, "edge: configuration invalid: %d error(s), %d warning(s)\n", errs, warns)
		return exitInvalid
	}
	fmt.Fprintf(stderr, "edge: configuration valid (%d warning(s))\n", warns)
	return exitOK
}

// serve runs edge until SIGTERM or SIGINT, then drains; a second signal exits at once. SIGHUP and
// changes to the config or data files reload; SIGUSR2 upgrades the binary: the executable at edge's
// path is started with the same arguments and this process's listening sockets, and once it
// reports ready this process drains and exits (package handoff). Signals are caught before
// startup, so one arriving while edge starts is honoured.
//
// Under systemd (Type=notify) the manager hears READY=1 once the listeners are up, RELOADING=1 and
// READY=1 around each reload, STOPPING=1 on drain, WATCHDOG=1 at half its interval, and, from a
// process that took over in an upgrade, MAINPID= with READY=1.
func serve(cfg *edge.Config, stderr io.Writer) int {
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
		<-stop
		fmt.Fprintln(stderr, "edge: second signal, exiting now")
		os.Exit(exitInvalid)
	}()
	notify := sdnotify.FromEnv()
	ho, err := handoff.FromEnv()
	if err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	srv, err := edge.NewServer(cfg, edge.Options{Handoff: ho, Notify: notify, Version: version})
	if err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	log := srv.Logger()
	if ho.Inherited() {
		// Systemd follows this process from now on (NotifyAccess=all lets it say so), before the
		// old one hears that it may go.
		_ = notify.MainPID(os.Getpid())
		if err := ho.Ready(); err != nil {
			log.Error("upgrade: telling the old process", "err", err)
		}
		log.Info("upgrade: took over the listening sockets", "pid", os.Getpid())
	} else {
		_ = notify.Ready()
	}
	// live ends when this process stops being the one systemd follows: on drain or after a handoff.
	live, endLive := context.WithCancel(ctx)
	defer endLive()
	go notify.RunWatchdog(live, sdnotify.WatchdogInterval())
	go func() {
		if err := srv.Watch(live); err != nil {
			fmt.Fprintf(stderr, "edge: file watching off: %v\n", err)
		}
	}()
	go func() {
		for {
			select {
			case <-hup:
				srv.Reload("sighup")
			case <-usr2:
				if upgrade(live, srv, ho, log) {
					endLive()
					cancel()
					return
				}
			case <-live.Done():
				return
			}
		}
	}()
	<-ctx.Done()
	if !ho.HandedOff() {
		_ = notify.Stopping()
	}
	endLive()
	if err := srv.Drain(); err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// upgradeTimeout bounds how long a new binary may take to start serving before the upgrade is
// abandoned (it loads the same configuration, rule set included).
const upgradeTimeout = 60 * time.Second

// upgrade starts the binary at edge's own path with this process's listening sockets; it reports
// whether the new process took over (then this one drains).
func upgrade(ctx context.Context, srv *edge.Server, ho *handoff.Process, log *slog.Logger) bool {
	exe, err := os.Executable()
	if err != nil {
		log.Error("upgrade: cannot find the executable", "err", err)
		return false
	}
	socks, err := srv.Sockets()
	if err != nil {
		log.Error("upgrade: listening sockets", "err", err)
		return false
	}
	log.Info("upgrade: starting the new binary", "exe", exe)
	uctx, cancel := context.WithTimeout(ctx, upgradeTimeout)
	defer cancel()
	pid, err := ho.Upgrade(uctx, exe, os.Args[1:], socks, os.Stdout, os.Stderr)
	if err != nil {
		log.Error("upgrade failed: this process goes on serving", "err", err)
		return false
	}
	log.Info("upgrade: the new process serves; draining", "new_pid", pid)
	return true
}
