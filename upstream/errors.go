package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
)

// ErrNoHealthyServer means every server of the backend is ejected or marked down (503).
var ErrNoHealthyServer = errors.New("upstream: no healthy server")

// ErrConnectTimeout means the TCP connect, TLS handshake or QUIC handshake timed out (504).
var ErrConnectTimeout = errors.New("upstream: connect timeout")

// ErrResponseHeaderTimeout means the server did not send response headers in time (504).
var ErrResponseHeaderTimeout = errors.New("upstream: response header timeout")

// Error is a failed exchange with one server; it wraps the cause.
type Error struct {
	// Backend and Server name where the last attempt went.
	Backend, Server string
	// Attempts is how many servers were tried.
	Attempts int
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	if e.Server == "" {
		return "upstream: backend " + e.Backend + ": " + e.Err.Error()
	}
	return "upstream: backend " + e.Backend + " server " + e.Server + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// dialError marks a failure to connect: the request was not sent.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// StatusFor maps an error from (*Pool).RoundTrip to the status the client sees: 503 when no
// server is available, 504 for timeouts (connect, response header, or the request's own
// deadline), 502 otherwise. It is the one place these statuses are decided.
func StatusFor(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrNoHealthyServer):
		return http.StatusServiceUnavailable
	case isTimeout(err):
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

func isTimeout(err error) bool {
	if errors.Is(err, ErrConnectTimeout) || errors.Is(err, ErrResponseHeaderTimeout) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func sortStrings(s []string) { slices.Sort(s) }
