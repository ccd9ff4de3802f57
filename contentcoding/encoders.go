package contentcoding

import (
	"io"
	"strconv"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Level ranges per coding. Zstd's are the encoder's four levels (1 fastest … 4 best, comparable to
// zstd -1, -3, -7 and -11).
const (
	MinGzipLevel   = 1
	MaxGzipLevel   = 9
	MinBrotliLevel = 0
	MaxBrotliLevel = 11
	MinZstdLevel   = 1
	MaxZstdLevel   = 4
	maxLevel       = MaxBrotliLevel
)

// Windows: browsers accept zstd windows up to 8 MiB (RFC 9659 §3) and brotli up to 16 MiB, but a
// pooled encoder holds its window for as long as it lives; responses worth compressing on the fly
// are far smaller, so edge keeps both at 256 KiB (measured on the benchmark corpus, a 287 KiB HTML
// page included: output within 0.05 % of what 4 MiB and 8 MiB windows give).
const (
	zstdWindowBytes = 256 << 10
	brotliLGWin     = 18
)

// encoder is what each compression library's streaming writer provides.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
	Reset(io.Writer)
}

// pools holds idle encoders per coding and level. Encoders are large (tens to hundreds of KiB of
// tables and window), so reusing them is what keeps compression from dominating allocation.
var pools [numCodings][maxLevel + 1]sync.Pool

// validLevel reports whether level is within c's range.
func validLevel(c Coding, level int) bool {
	switch c {
	case Gzip:
		return level >= MinGzipLevel && level <= MaxGzipLevel
	case Brotli:
		return level >= MinBrotliLevel && level <= MaxBrotliLevel
	case Zstd:
		return level >= MinZstdLevel && level <= MaxZstdLevel
	}
	return false
}

// getEncoder returns an encoder for c at level writing to w. level must be valid for c.
func getEncoder(c Coding, level int, w io.Writer) encoder {
	if e, ok := pools[c][level].Get().(encoder); ok {
		e.Reset(w)
		return e
	}
	return newEncoder(c, level, w)
}

// putEncoder returns a closed encoder to its pool, holding no reference to the writer it served.
func putEncoder(c Coding, level int, e encoder) {
	e.Reset(nil)
	pools[c][level].Put(e)
}

func newEncoder(c Coding, level int, w io.Writer) encoder {
	switch c {
	case Gzip:
		e, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			panic("contentcoding: gzip level " + strconv.Itoa(level) + ": " + err.Error())
		}
		return e
	case Brotli:
		return brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: level, LGWin: brotliLGWin})
	case Zstd:
		e, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevel(level)), zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(zstdWindowBytes), zstd.WithZeroFrames(true))
		if err != nil {
			panic("contentcoding: zstd level " + strconv.Itoa(level) + ": " + err.Error())
		}
		return e
	}
	panic("contentcoding: no encoder for " + c.String())
}
