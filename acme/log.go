package acme

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// slogCore carries certmagic's zap log lines into the edge's process log. certmagic narrates every
// step at info level (locks, challenges, polling); those go to debug, so the process log shows its
// warnings and errors and edge's own lines about orders and renewals.
type slogCore struct {
	log    *slog.Logger
	fields []zapcore.Field
}

func zapLogger(l *slog.Logger) *zap.Logger { return zap.New(&slogCore{log: l}) }

func (c *slogCore) Enabled(lvl zapcore.Level) bool {
	return c.log.Enabled(context.Background(), slogLevel(lvl))
}

func (c *slogCore) With(fs []zapcore.Field) zapcore.Core {
	return &slogCore{log: c.log, fields: append(append([]zapcore.Field(nil), c.fields...), fs...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	attrs := make([]any, 0, 2*len(enc.Fields)+2)
	if e.LoggerName != "" {
		attrs = append(attrs, "component", e.LoggerName)
	}
	for k, v := range enc.Fields {
		attrs = append(attrs, k, v)
	}
	lvl := slogLevel(e.Level)
	if e.Message == "tls-alpn challenge" {
		// Any client can offer ALPN acme-tls/1 for a name with no challenge pending; certmagic
		// logs each at error level, which would let anyone fill the log.
		lvl = slog.LevelDebug
	}
	c.log.Log(context.Background(), lvl, "acme: "+e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l >= zapcore.ErrorLevel:
		return slog.LevelError
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
