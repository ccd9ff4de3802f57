package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDistServiceUnit: dist/edge.service is clean for systemd-analyze verify (where the tool
// exists) and has what running edge as a service relies on. verify also checks that ExecStart's
// binary exists, so the copy it reads names /bin/true there; everything else is the file as
// shipped.
func TestDistServiceUnit(t *testing.T) {
	unit, err := os.ReadFile("../../dist/edge.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Type=notify\n", "NotifyAccess=all\n", "ExecReload=/bin/kill -HUP $MAINPID\n", "WatchdogSec=",
		"DynamicUser=yes\n", "ProtectSystem=strict\n", "StateDirectory=edge\n", "Environment=EDGE_STATE_DIR=%S/edge\n",
		"AmbientCapabilities=CAP_NET_BIND_SERVICE\n", "NoNewPrivileges=yes\n", "SystemCallFilter=@system-service\n",
		"ExecStart=/usr/local/bin/edge ",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("dist/edge.service lacks %q", strings.TrimSpace(want))
		}
	}
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "edge.service")
	os.WriteFile(path, []byte(strings.Replace(string(unit), "ExecStart=/usr/local/bin/edge ", "ExecStart=/bin/true ", 1)), 0o644)
	out, err := exec.Command(sa, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestDistContainer: the container image's configuration is valid, and its build is static and
// runs as a non-root user.
func TestDistContainer(t *testing.T) {
	code, _, stderr := runEdge(t, "--validate", "--config", "../../dist/container.toml")
	if code != exitOK {
		t.Errorf("dist/container.toml: exit %d\n%s", code, stderr)
	}
	cf, err := os.ReadFile("../../dist/Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "FROM scratch", "USER 65532:65532", "COPY dist/container.toml /etc/edge/edge.toml"} {
		if !strings.Contains(string(cf), want) {
			t.Errorf("dist/Containerfile lacks %q", want)
		}
	}
	lr, err := os.ReadFile("../../dist/logrotate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lr), "/var/log/edge/access.log") || !strings.Contains(string(lr), "systemctl reload edge.service") {
		t.Errorf("dist/logrotate does not rotate /var/log/edge/access.log with a reload:\n%s", lr)
	}
	if lt, err := exec.LookPath("logrotate"); err == nil {
		// logrotate -d parses the file without rotating anything.
		out, err := exec.Command(lt, "-d", "../../dist/logrotate").CombinedOutput()
		if err != nil || strings.Contains(string(out), "error") {
			t.Errorf("logrotate -d: %v\n%s", err, out)
		}
	}
}
