// Package h2server is an HTTP/2 server (RFC 9113) written for a proxy: it serves one connection with
// one goroutine that reads frames and one goroutine per request that runs the handler, and nothing
// else. A request's HEADERS (and CONTINUATION) frames are decoded (golang.org/x/net/http2's Framer
// and hpack) straight into an *http.Request that goes to the handler — edge's one pipeline — on a
// goroutine of its own, since forwarding blocks; there is no per-stream hand-off through channels
// and no write scheduler goroutine.
//
// Writes are batched per connection: a handler encodes its frames (HPACK under the connection's
// lock, so the shared encoder's state follows the wire order) into the connection's write queue,
// and whoever finds no write in progress flushes the whole queue with one Write. While that write
// is in the kernel, frames of other streams queue behind it and leave together in the next one, so
// a client that keeps several requests in flight gets their responses in few syscalls. The read
// loop never writes itself (a client that does not read must not stop it from reading): its own
// frames (SETTINGS and PING acknowledgements, RST_STREAM, WINDOW_UPDATE) are flushed by a short
// goroutine when no handler is writing.
//
// Bounds: the write queue holds at most MaxQueuedBytes before handlers wait (the queue is the only
// response buffer; a handler's Write copies into it); a client that keeps sending frames that need
// an answer while not reading past four times that is closed. A request body holds at most the
// stream window the server advertised (StreamWindow) and all bodies of a connection at most the
// connection window (ConnWindow): data past them is a flow-control error. The handler's reads of
// the body return the window to the client, so a slow handler slows the client down. Sends respect
// the client's windows; a stream or connection whose window stays at zero longer than SendTimeout
// is reset or closed. MaxConcurrentStreams is advertised and enforced (REFUSED_STREAM past it);
// header blocks are limited (MAX_HEADER_LIST_SIZE) and a CONTINUATION sequence past the limit
// closes the connection (CVE-2024-27316). Abuse accounting (rapid reset, floods, empty frames) is
// not here: the root serves each connection through an h2guard.Conn, whose tap counts the same
// glitches under this server as under golang.org/x/net/http2.
//
// Concurrency: a Server is safe for concurrent use; ServeConn runs until the connection ends.
// Shutdown sends GOAWAY to every connection, which then closes once its streams have ended.
// Nothing here is reloadable: a connection keeps the Server it was accepted with.
package h2server
