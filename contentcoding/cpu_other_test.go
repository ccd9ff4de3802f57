//go:build !linux

package contentcoding

import "time"

// threadCPU falls back to wall time where the thread CPU clock is not available.
func threadCPU() int64 { return time.Now().UnixNano() }
