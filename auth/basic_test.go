package auth

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestUsers(t *testing.T) {
	bc, err := bcrypt.GenerateFromPassword([]byte("b-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	file := "# users\n\nbob:" + string(bc) + "\n  ann:" + HashArgon2id("a-pass", []byte("0123456789abcdef")) + "\n"
	u, err := ParseUsers([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if u.Len() != 2 {
		t.Fatalf("got %d users, want 2", u.Len())
	}
	tests := []struct {
		user, pw string
		want     bool
	}{
		{"bob", "b-pass", true},
		{"bob", "b-pass", true}, // from the cache
		{"bob", "a-pass", false},
		{"ann", "a-pass", true},
		{"ann", "A-pass", false},
		{"ann", "", false},
		{"eve", "b-pass", false},
		{"", "", false},
	}
	for _, tc := range tests {
		if got := u.Verify(tc.user, tc.pw); got != tc.want {
			t.Errorf("Verify(%q, %q): got %v, want %v", tc.user, tc.pw, got, tc.want)
		}
	}
}

func TestParseUsersErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"no colon", "bob\n", "line 1"},
		{"plain text", "bob:secret\n", "neither bcrypt nor argon2id"},
		{"duplicate", "a:$2a$04$abcdefghijklmnopqrstuu5CmbZbcT8iFTjyFdV9g9FpQn0ccY0Im\na:$2a$04$abcdefghijklmnopqrstuu5CmbZbcT8iFTjyFdV9g9FpQn0ccY0Im\n", "twice"},
		{"bad argon", "a:$argon2id$v=19$m=0,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n", "malformed argon2id"},
		{"argon wrong version", "a:$argon2id$v=16$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n", "malformed argon2id"},
		{"bad bcrypt", "a:$2b$99$zz\n", "malformed bcrypt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseUsers([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzParseUsers: a users file never panics the parser, and a file that parses refuses an empty
// password for every user (no hash is of the empty string in the seeds' shape).
func FuzzParseUsers(f *testing.F) {
	f.Add([]byte("bob:$2a$04$abcdefghijklmnopqrstuu5CmbZbcT8iFTjyFdV9g9FpQn0ccY0Im\n"))
	f.Add([]byte("ann:$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA\n# c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := ParseUsers(data)
		if err != nil {
			return
		}
		if u.Verify("\x00no such user", "") {
			t.Fatal("an unknown user verified")
		}
	})
}
