package h2server

import (
	"runtime"
	"time"
)

// The write side of a connection: every goroutine appends whole frames to c.wbuf under c.mu, and
// one writer goroutine per connection hands the queue to the socket. While a Write is in the kernel,
// the next frames (of any stream) gather in the other buffer and leave with the next Write: the
// queue is written in as few syscalls as the client's pace allows.

// deadlineRefresh is how stale the socket's write deadline may get before the writer moves it
// (a deadline update per write would cost a timer operation per batch); at most half the timeout,
// so a write always has half of it at least.
const deadlineRefresh = time.Second

// flushAsyncLocked tells the writer there are frames to write.
func (c *conn) flushAsyncLocked() {
	if c.writerIdle && len(c.wbuf) > 0 {
		c.wcond.Signal()
	}
}

// writeLoop is the connection's writer: it writes the queue whenever it is not empty, until the
// connection is closed and the queue written (or a write failed), and then closes the socket.
func (c *conn) writeLoop() {
	timeout := c.srv.sendTimeout()
	refresh := min(deadlineRefresh, timeout/2)
	var deadlineSet time.Time
	c.mu.Lock()
	for {
		if len(c.wbuf) == 0 && !c.closed {
			for len(c.wbuf) == 0 && !c.closed {
				c.writerIdle = true
				c.wcond.Wait()
				c.writerIdle = false
			}
			// Woken by the first frame of a burst: the handlers that are runnable now (the other
			// requests of the client's last read) queue theirs before the batch leaves.
			c.mu.Unlock()
			runtime.Gosched()
			c.mu.Lock()
		}
		if len(c.wbuf) == 0 || c.werr != nil {
			break
		}
		buf := c.wbuf
		c.wbuf, c.spare = c.spare[:0], nil
		c.wgen++
		c.mu.Unlock()
		if now := time.Now(); now.Sub(deadlineSet) > refresh {
			_ = c.nc.SetWriteDeadline(now.Add(timeout))
			deadlineSet = now
		}
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		if cap(buf) <= 2*c.srv.maxQueued() {
			c.spare = buf[:0]
		}
		if err != nil {
			c.werr = err
			c.wbuf = c.wbuf[:0]
			c.closeAfterFlushLocked()
		}
		c.wakeAllLocked()
	}
	c.closed = true
	c.mu.Unlock()
	_ = c.nc.Close()
	close(c.done)
}
