package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"edge"
)

// cmdCerts: `edge certs [--config F] [--json]` lists the certificates the configuration serves:
// their source (file, acme, self-signed), names, issuer and expiry.
func cmdCerts(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("certs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration file (default ./edge.toml, else the built-in one)")
	asJSON := fs.Bool("json", false, "print a JSON array")
	if fs.Parse(args) != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: edge certs [--config FILE] [--json]")
		return exitUsage
	}
	cfg, problems := loadConfig(*configPath)
	if cfg == nil || problems.HasErrors() {
		for _, p := range problems {
			fmt.Fprintln(stderr, p.String())
		}
		return exitInvalid
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := edge.ListCertificates(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "edge certs: %v\n", err)
	}
	if *asJSON {
		if list == nil {
			list = []edge.CertListing{}
		}
		b, _ := json.MarshalIndent(list, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SOURCE\tNAMES\tISSUER\tEXPIRES\tDAYS\tWHERE")
		now := time.Now()
		for _, c := range list {
			where := c.Where
			if c.Default {
				where += " (default)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%s\n", c.Source, strings.Join(c.Names, ","), c.Issuer,
				c.NotAfter.UTC().Format(time.DateOnly), c.NotAfter.Sub(now).Hours()/24, where)
		}
		tw.Flush()
	}
	if err != nil {
		return exitInvalid
	}
	return exitOK
}
