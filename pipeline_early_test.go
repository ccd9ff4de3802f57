package edge

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestEarlyForwardable(t *testing.T) {
	for _, tc := range []struct {
		method string
		cl     int64
		body   io.ReadCloser
		want   bool
	}{
		{"GET", 0, http.NoBody, true},
		{"HEAD", 0, nil, true},
		{"OPTIONS", 0, http.NoBody, true},
		{"GET", -1, io.NopCloser(strings.NewReader("x")), true}, // decided again once the body is known
		{"GET", 5, io.NopCloser(strings.NewReader("hello")), false},
		{"POST", 0, http.NoBody, false},
		{"PUT", 0, http.NoBody, false},
		{"DELETE", 0, http.NoBody, false},
	} {
		r := &http.Request{Method: tc.method, ContentLength: tc.cl, Body: tc.body}
		if got := earlyForwardable(r); got != tc.want {
			t.Errorf("%s with length %d: got %v, want %v", tc.method, tc.cl, got, tc.want)
		}
	}
}
