package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"edge/trust"
)

func runEdgeIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestFingerprintCommand(t *testing.T) {
	in := `{"id":"a","transport":"tcp","handshake_hex":"zz"}
not json
{"id":"c","transport":"tcp","record_hex":"16030100"}
`
	// A real captured vector when the shared corpus is present.
	if f, err := os.Open("../../../shared/corpora/fingerprint/vectors.jsonl"); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		if sc.Scan() {
			in += sc.Text() + "\n"
		}
		f.Close()
	}
	code, out, stderr := runEdgeIn(t, in, "fingerprint")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := strings.Count(strings.TrimSpace(in), "\n") + 1
	if len(lines) != want {
		t.Fatalf("got %d output lines for %d input lines:\n%s", len(lines), want, out)
	}
	for i, l := range lines[:3] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["error"] == nil {
			t.Errorf("line %d: %s, want an error line", i, l)
		}
	}
	if len(lines) == 4 {
		var m map[string]any
		json.Unmarshal([]byte(lines[3]), &m)
		if ja4, _ := m["ja4"].(string); len(ja4) < 10 {
			t.Errorf("vector line: %s", lines[3])
		}
	}
}

func TestECHCommands(t *testing.T) {
	key := filepath.Join(t.TempDir(), "edge.echkey")
	if code, _, stderr := runEdgeIn(t, "", "ech", "keygen", "--out", key, "--public-name", "public.example"); code != exitOK {
		t.Fatalf("keygen: exit %d %s", code, stderr)
	}
	if st, _ := os.Stat(key); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	code, out, stderr := runEdgeIn(t, "", "ech", "config", key)
	if code != exitOK {
		t.Fatalf("config: exit %d %s", code, stderr)
	}
	list, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out))
	if err != nil || len(list) < 10 || !strings.Contains(string(list), "public.example") {
		t.Errorf("ECHConfigList %q: %v", out, err)
	}
	if code, _, _ := runEdgeIn(t, "", "ech", "keygen", "--out", key); code != exitInvalid {
		t.Errorf("keygen over an existing key: exit %d, want 1 (never overwrite keys)", code)
	}
	if code, _, _ := runEdgeIn(t, "", "ech"); code != exitUsage {
		t.Errorf("bare ech: exit %d, want 2", code)
	}
}

func TestKeysCommands(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "fleet")
	if code, _, stderr := runEdgeIn(t, "", "keys", "generate", name); code != exitOK {
		t.Fatalf("generate: exit %d %s", code, stderr)
	}
	data := filepath.Join(dir, "blocklist.txt")
	os.WriteFile(data, []byte("192.0.2.0/24\n"), 0o644)
	if code, _, stderr := runEdgeIn(t, "", "keys", "sign", "--key", name+".key", data); code != exitOK {
		t.Fatalf("sign: exit %d %s", code, stderr)
	}
	v, err := trust.LoadVerifier([]string{name + ".pub"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.ReadFile(data); err != nil {
		t.Errorf("signed file does not verify: %v", err)
	}
}
