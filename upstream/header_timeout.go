package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// headerTimeout enforces response_header_timeout_ms for h3, which quic-go's transport lacks: like
// net/http's ResponseHeaderTimeout, the clock starts once the request is fully written.
type headerTimeout struct {
	rt http.RoundTripper
	d  time.Duration
}

// headerTimer is the per-request state of headerTimeout.
type headerTimer struct {
	mu     sync.Mutex
	t      *time.Timer
	done   bool // response headers arrived (or the round trip failed)
	fired  bool
	cancel context.CancelCauseFunc
}

func (h *headerTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	ht := &headerTimer{cancel: cancel}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			ht.mu.Lock()
			defer ht.mu.Unlock()
			if info.Err != nil || ht.done || ht.t != nil {
				return
			}
			ht.t = time.AfterFunc(h.d, func() {
				ht.mu.Lock()
				if !ht.done {
					ht.fired = true
					ht.cancel(ErrResponseHeaderTimeout)
				}
				ht.mu.Unlock()
			})
		},
	})
	resp, err := h.rt.RoundTrip(req.WithContext(ctx))
	ht.mu.Lock()
	ht.done = true
	if ht.t != nil {
		ht.t.Stop()
	}
	fired := ht.fired
	ht.mu.Unlock()
	if fired {
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, ErrResponseHeaderTimeout
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
