package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"edge"
	"edge/fingerprint"
	"edge/tls"
	"edge/trust"
	"edge/waf"
)

// subcommand is a tool that runs instead of the proxy: `edge NAME ...`.
type subcommand struct {
	name string
	args string // what follows the name on the usage line
	what string // what it does, for --help
	run  func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// subcommands in the order --help lists them.
var subcommands = []subcommand{
	{"version", "", "version, commit, Go and module versions", cmdVersion},
	{"fingerprint", "< hellos.jsonl", "JA3, JA4 and their raw forms of ClientHellos, one JSON line each", cmdFingerprint},
	{"waf", "eval [--config F] [--paranoia N] [--explain] < requests.jsonl", "the live WAF on recorded requests", cmdWAF},
	{"ech", "keygen --out F | config F", "an ECH key (hybrid ML-KEM), its ECHConfigList for DNS", cmdECH},
	{"keys", "generate NAME | sign --key NAME.key F...", "ML-DSA-65 keys, data file signatures", cmdKeys},
	{"certs", "[--config F] [--json]", "the certificates served: source (file, acme, self-signed), names, expiry", cmdCerts},
}

func findSubcommand(name string) *subcommand {
	for i := range subcommands {
		if subcommands[i].name == name {
			return &subcommands[i]
		}
	}
	return nil
}

// cmdFingerprint: `edge fingerprint` reads JSON lines of ClientHellos on stdin and writes one line
// of JA3/JA4 fingerprints (or an error) per input line.
func cmdFingerprint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: edge fingerprint < hellos.jsonl")
		return exitUsage
	}
	if err := fingerprint.RunLines(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "edge fingerprint: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// cmdECH: `edge ech keygen [--public-name NAME] [--config-id N] --out FILE` writes an ECH key (hybrid
// post-quantum KEM); `edge ech config FILE` prints its ECHConfigList in base64 for a DNS HTTPS record.
func cmdECH(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: edge ech keygen --out FILE [--public-name NAME] [--config-id N] | edge ech config FILE")
		return exitUsage
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "keygen":
		fs := flag.NewFlagSet("ech keygen", flag.ContinueOnError)
		fs.SetOutput(stderr)
		out := fs.String("out", "", "key file to write (mode 0600)")
		name := fs.String("public-name", "localhost", "client-facing server name of the outer ClientHello")
		id := fs.Uint("config-id", 1, "ECH config id (0-255)")
		if fs.Parse(args[1:]) != nil || *out == "" || *id > 255 || fs.NArg() > 0 {
			return usage()
		}
		key, err := tls.GenerateECHKey(uint8(*id), *name)
		if err != nil {
			fmt.Fprintf(stderr, "edge ech keygen: %v\n", err)
			return exitInvalid
		}
		if err := writeNew(*out, key, 0o600); err != nil {
			fmt.Fprintf(stderr, "edge ech keygen: %v\n", err)
			return exitInvalid
		}
		return exitOK
	case "config":
		if len(args) != 2 {
			return usage()
		}
		key, err := os.ReadFile(args[1])
		if err != nil {
			fmt.Fprintf(stderr, "edge ech config: %v\n", err)
			return exitInvalid
		}
		list, err := tls.ECHConfigList(key)
		if err != nil {
			fmt.Fprintf(stderr, "edge ech config: %v\n", err)
			return exitInvalid
		}
		fmt.Fprintln(stdout, base64.StdEncoding.EncodeToString(list))
		return exitOK
	}
	return usage()
}

// cmdKeys: `edge keys generate NAME` writes NAME.pub and NAME.key (ML-DSA-65); `edge keys sign --key
// NAME.key FILE...` writes FILE.sig for each data file.
func cmdKeys(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: edge keys generate NAME | edge keys sign --key NAME.key FILE...")
		return exitUsage
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "generate":
		if len(args) != 2 {
			return usage()
		}
		pub, priv, err := trust.GenerateKey()
		if err == nil {
			err = writeNew(args[1]+".key", priv, 0o600)
		}
		if err == nil {
			err = writeNew(args[1]+".pub", pub, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "edge keys generate: %v\n", err)
			return exitInvalid
		}
		fmt.Fprintf(stdout, "wrote %s.pub (list it in [data] trusted_keys) and %s.key (keep it secret)\n", args[1], args[1])
		return exitOK
	case "sign":
		fs := flag.NewFlagSet("keys sign", flag.ContinueOnError)
		fs.SetOutput(stderr)
		keyFile := fs.String("key", "", "private key file from `edge keys generate`")
		if fs.Parse(args[1:]) != nil || *keyFile == "" || fs.NArg() == 0 {
			return usage()
		}
		priv, err := os.ReadFile(*keyFile)
		if err != nil {
			fmt.Fprintf(stderr, "edge keys sign: %v\n", err)
			return exitInvalid
		}
		for _, f := range fs.Args() {
			data, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintf(stderr, "edge keys sign: %v\n", err)
				return exitInvalid
			}
			sig, err := trust.Sign(priv, f, data)
			if err == nil {
				err = os.WriteFile(f+trust.SigSuffix, sig, 0o644)
			}
			if err != nil {
				fmt.Fprintf(stderr, "edge keys sign: %s: %v\n", f, err)
				return exitInvalid
			}
			fmt.Fprintf(stdout, "signed %s → %s%s\n", f, f, trust.SigSuffix)
		}
		return exitOK
	}
	return usage()
}

// writeNew writes a file that must not exist yet: keys are never overwritten by accident.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// cmdWAF: `edge waf eval [--config FILE] [--paranoia N] [--explain]` evaluates requests in the
// corpora JSON-lines format with exactly the evaluation the live pipeline runs, one verdict line per
// input line; a summary goes to stderr.
func cmdWAF(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: edge waf eval [--config FILE] [--paranoia N] [--explain] < requests.jsonl")
		return exitUsage
	}
	if len(args) == 0 || args[0] != "eval" {
		return usage()
	}
	fs := flag.NewFlagSet("waf eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration file (default ./edge.toml if present, else the built-in default)")
	paranoia := fs.Int("paranoia", 0, "override waf.paranoia (1-4)")
	explain := fs.Bool("explain", false, "add every matched rule with its target, transforms and fragment")
	if fs.Parse(args[1:]) != nil || fs.NArg() > 0 || *paranoia < 0 || *paranoia > 4 {
		return usage()
	}
	var override func(*edge.Config)
	if *paranoia > 0 {
		override = func(c *edge.Config) { c.WAF.Paranoia = *paranoia }
	}
	cfg, problems := loadConfigWith(*configPath, override)
	if cfg == nil || problems.HasErrors() {
		for _, p := range problems {
			fmt.Fprintln(stderr, p.String())
		}
		return exitInvalid
	}
	eval, err := edge.WAFEvaluator(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "edge waf eval: %v\n", err)
		return exitInvalid
	}
	if err := waf.EvalLines(stdin, stdout, stderr, eval, *explain); err != nil {
		fmt.Fprintf(stderr, "edge waf eval: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// cmdVersion: `edge version` prints edge's version and commit, the Go release that built it and the
// version of every module linked in, from the binary's own build information.
func cmdVersion(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: edge version")
		return exitUsage
	}
	bi, _ := debug.ReadBuildInfo()
	writeVersion(stdout, bi)
	return exitOK
}

// writeVersion writes the version report for bi (nil when the binary carries no build information).
// The commit is main.commit when set at link time, else the VCS revision Go recorded.
func writeVersion(w io.Writer, bi *debug.BuildInfo) {
	fmt.Fprintf(w, "edge %s\n", version)
	rev, modified, when := commit, false, ""
	goVersion := runtime.Version()
	if bi != nil {
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	} else if modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "commit  %s\n", rev)
	if when != "" {
		fmt.Fprintf(w, "date    %s\n", when)
	}
	fmt.Fprintf(w, "go      %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	if bi == nil || len(bi.Deps) == 0 {
		return
	}
	fmt.Fprintln(w, "modules")
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		fmt.Fprintf(w, "  %s %s\n", d.Path, v)
	}
}
