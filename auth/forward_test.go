package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestForwarder(t *testing.T) {
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Forwarded-Uri") == "/slow" {
			time.Sleep(500 * time.Millisecond)
		}
		if r.Header.Get("Cookie") != "" {
			t.Errorf("Cookie reached the auth service though request_headers omit it")
		}
		w.Header().Set("X-Auth-User", "alice")
		w.Header().Set("X-Other", "not copied")
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			w.WriteHeader(http.StatusNoContent)
		case "Bearer forbidden":
			w.WriteHeader(http.StatusForbidden)
		case "Bearer broken":
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.Header().Set("WWW-Authenticate", `Bearer realm="svc"`)
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer svc.Close()
	f, err := NewForwarder(ForwardConfig{URL: svc.URL, TimeoutMS: 200, RequestHeaders: []string{"authorization"},
		ResponseHeaders: []string{"x-auth-user"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	check := func(auth, uri string) (ForwardResult, error) {
		h := http.Header{"Cookie": {"c=1"}}
		if auth != "" {
			h.Set("Authorization", auth)
		}
		return f.Check(context.Background(), ForwardRequest{Method: "GET", Scheme: "https", Host: "h", URI: uri, ClientIP: "192.0.2.1", Header: h})
	}
	tests := []struct {
		name, auth, uri string
		status          int
		header          string
		err             bool
	}{
		{"allowed", "Bearer good", "/", 204, "X-Auth-User=alice", false},
		{"forbidden", "Bearer forbidden", "/", 403, "", false},
		{"unauthorized", "", "/", 401, `Www-Authenticate=Bearer realm="svc"`, false},
		{"service error", "Bearer broken", "/", 502, "", false},
		{"timeout", "Bearer good", "/slow", 0, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := check(tc.auth, tc.uri)
			if (err != nil) != tc.err {
				t.Fatalf("got err %v, want error %v", err, tc.err)
			}
			if res.Status != tc.status {
				t.Fatalf("got status %d, want %d", res.Status, tc.status)
			}
			var got string
			for k, v := range res.Header {
				got = k + "=" + v[0]
			}
			if len(res.Header) > 1 || got != tc.header {
				t.Errorf("got headers %v, want %s", res.Header, tc.header)
			}
		})
	}
	if _, err := NewForwarder(ForwardConfig{URL: "unix:/x"}, nil); err == nil {
		t.Error("a non-http URL was accepted")
	}
	if _, err := NewForwarder(ForwardConfig{URL: svc.URL, ResponseHeaders: []string{"Transfer-Encoding"}}, nil); err == nil {
		t.Error("the auth service was allowed to set Transfer-Encoding")
	}
}
