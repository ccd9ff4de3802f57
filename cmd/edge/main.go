package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"edge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

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
		if sub, ok := subcommands[args[0]]; ok {
			return sub(args[1:], stdin, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration file (default ./edge.toml if present, else the built-in default)")
	validate := fs.Bool("validate", false, "check the configuration and everything it points to, then exit (0 valid, 1 invalid)")
	asJSON := fs.Bool("json", false, "with --validate: print problems as a JSON array on stdout")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: edge [--config FILE] | edge --validate [--config FILE] [--json] | edge --version\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "edge: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
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
// changes to the config or data files reload. Signals are caught before startup, so one arriving
// while edge starts is honoured.
func serve(cfg *edge.Config, stderr io.Writer) int {
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
		<-stop
		fmt.Fprintln(stderr, "edge: second signal, exiting now")
		os.Exit(exitInvalid)
	}()
	srv, err := edge.NewServer(cfg, edge.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	go func() {
		for {
			select {
			case <-hup:
				srv.Reload("sighup")
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		if err := srv.Watch(ctx); err != nil {
			fmt.Fprintf(stderr, "edge: file watching off: %v\n", err)
		}
	}()
	if err := srv.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "edge: %v\n", err)
		return exitInvalid
	}
	return exitOK
}
