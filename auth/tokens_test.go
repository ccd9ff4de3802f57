package auth

import (
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	file := "# admin tokens\nops:" + TokenDigest("s3cret-ops") + "\nci:" + TokenDigest("s3cret-ci") + "\n"
	tk, err := ParseTokens([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]string{"s3cret-ops": "ops", "s3cret-ci": "ci", "nope": "", "": ""} {
		name, ok := tk.Verify(token)
		if name != want || ok != (want != "") {
			t.Errorf("Verify(%q): got %q %v, want %q", token, name, ok, want)
		}
	}
	if strings.Contains(file, "s3cret") {
		t.Error("the token file holds a token")
	}
	for _, bad := range []string{"ops:s3cret\n", "ops:sha256:zz\n", ":sha256:" + strings.Repeat("0", 64) + "\n", "", "a:" + TokenDigest("x") + "\na:" + TokenDigest("y") + "\n"} {
		if _, err := ParseTokens([]byte(bad)); err == nil {
			t.Errorf("ParseTokens(%q): got nil error", bad)
		}
	}
}
