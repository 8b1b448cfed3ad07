package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"
)

// Log field names, in one place: log queries match on them. Every line
// about a run carries fieldRun.
const (
	fieldRun         = "run"
	fieldTenant      = "tenant"
	fieldPlan        = "plan"
	fieldLanguage    = "language"
	fieldProcedure   = "procedure"
	fieldCode        = "code"
	fieldOutcome     = "outcome"
	fieldLimit       = "limit"
	fieldDurationMs  = "duration_ms"
	fieldWallMs      = "wall_ms"
	fieldQueueMs     = "queue_ms"
	fieldCPUMs       = "cpu_ms"
	fieldPeer        = "peer"
	fieldListen      = "listen"
	fieldAuth        = "auth"
	fieldInFlight    = "in_flight"
	fieldError       = "error"
	fieldMetadata    = "metadata"
	fieldMetadataCut = "metadata_cut"
	fieldCount       = "count"
	fieldFirst       = "first"
	fieldLast        = "last"
	fieldLogCut      = "log_cut"
)

// Bounds of what a client controls in a log record. A client's text (a
// request's metadata, an error message naming its input, a tenant name
// without authentication) is cut to these, with a marker saying how much
// was cut, so that no request can write a line of its own choosing size.
const (
	// LogMetadataEntries is how many entries of a run's metadata its "run"
	// line holds: the first by key; metadata_cut counts the others.
	LogMetadataEntries = 16
	// LogMetadataKeyBytes and LogMetadataValueBytes cut each key and value
	// of the metadata in the log.
	LogMetadataKeyBytes   = 64
	LogMetadataValueBytes = 256
	// LogValueBytes cuts any other string value of a log record.
	LogValueBytes = 1024
	// LogKeyBytes cuts any other attribute key (and group name).
	LogKeyBytes = 128
	// LogAttrs is how many attributes one record (or one group) keeps.
	LogAttrs = 32
	// LogLineBytes is the most a log line of NewLogger takes. A longer one
	// is written again with only its short attributes and log_cut saying
	// how long it was.
	LogLineBytes = 16 << 10
)

// NewLogger returns the server's logger: JSON lines on w from level up,
// each at most LogLineBytes, string values cut to LogValueBytes.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(boundHandler{&lineHandler{
		w: w, mu: &sync.Mutex{}, opts: &slog.HandlerOptions{Level: level}, max: LogLineBytes,
	}})
}

// ParseLogLevel parses debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) { return parseLevel(s) }

// bounded returns l with every record bounded: string values cut to
// LogValueBytes, at most LogAttrs attributes per record and group. The
// server logs through it whatever logger it is given.
func bounded(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(boundHandler); ok {
		return l
	}
	return slog.New(boundHandler{l.Handler()})
}

// cut returns s cut to at most n bytes on a UTF-8 boundary, with a marker
// saying how many bytes were cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s…[cut %d bytes]", s[:i], len(s)-i)
}

// boundHandler bounds the string values and attribute counts of records
// before its inner handler sees them.
type boundHandler struct{ inner slog.Handler }

func (h boundHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h boundHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return boundHandler{h.inner.WithAttrs(boundAttrs(as))}
}

func (h boundHandler) WithGroup(name string) slog.Handler {
	return boundHandler{h.inner.WithGroup(cut(name, LogKeyBytes))}
}

func (h boundHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, cut(r.Message, LogValueBytes), r.PC)
	n, dropped := 0, 0
	r.Attrs(func(a slog.Attr) bool {
		if n < LogAttrs {
			out.AddAttrs(boundAttr(a))
			n++
		} else {
			dropped++
		}
		return true
	})
	if dropped > 0 {
		out.AddAttrs(slog.String(fieldLogCut, fmt.Sprintf("%d attributes not logged (at most %d)", dropped, LogAttrs)))
	}
	return h.inner.Handle(ctx, out)
}

func boundAttrs(as []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, min(len(as), LogAttrs+1))
	for i, a := range as {
		if i == LogAttrs {
			out = append(out, slog.String(fieldLogCut, fmt.Sprintf("%d attributes not logged (at most %d)", len(as)-i, LogAttrs)))
			break
		}
		out = append(out, boundAttr(a))
	}
	return out
}

func boundAttr(a slog.Attr) slog.Attr {
	a.Key = cut(a.Key, LogKeyBytes)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(cut(v.String(), LogValueBytes))
	case slog.KindGroup:
		a.Value = slog.GroupValue(boundAttrs(v.Group())...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(cut(err.Error(), LogValueBytes))
		} else {
			a.Value = v
		}
	default:
		a.Value = v
	}
	return a
}

// lineHandler writes JSON lines of at most max bytes: it formats each
// record into a buffer first, and writes a line that came out longer again
// with only its short scalar attributes and log_cut.
type lineHandler struct {
	w    io.Writer
	mu   *sync.Mutex // serialises writes to w
	opts *slog.HandlerOptions
	ops  []handlerOp // WithAttrs and WithGroup, in order
	max  int
}

// handlerOp is one WithAttrs (attrs) or WithGroup (group) call.
type handlerOp struct {
	group string
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.opts.Level.Level()
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.ops = append(slices.Clip(h.ops), handlerOp{attrs: as})
	return &h2
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.ops = append(slices.Clip(h.ops), handlerOp{group: name})
	return &h2
}

// json returns a JSON handler on buf with h's attributes and groups, only
// the short ones if short.
func (h *lineHandler) json(buf *bytes.Buffer, short bool) slog.Handler {
	var jh slog.Handler = slog.NewJSONHandler(buf, h.opts)
	for _, op := range h.ops {
		if op.group != "" {
			jh = jh.WithGroup(op.group)
		} else if short {
			jh = jh.WithAttrs(shortAttrs(op.attrs))
		} else {
			jh = jh.WithAttrs(op.attrs)
		}
	}
	return jh
}

// shortAttr is the longest value, in bytes, an attribute of a cut line
// keeps.
const shortAttr = 128

func shortAttrs(as []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for _, a := range as {
		v := a.Value.Resolve()
		switch v.Kind() {
		case slog.KindGroup, slog.KindAny:
			continue
		case slog.KindString:
			if len(v.String()) > shortAttr {
				continue
			}
		}
		if len(a.Key) <= LogKeyBytes && len(out) < LogAttrs {
			out = append(out, slog.Attr{Key: a.Key, Value: v})
		}
	}
	return out
}

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	var buf bytes.Buffer
	if err := h.json(&buf, false).Handle(ctx, r); err != nil {
		return err
	}
	if n := buf.Len(); n > h.max {
		buf.Reset()
		var as []slog.Attr
		r.Attrs(func(a slog.Attr) bool { as = append(as, a); return true })
		out := slog.NewRecord(r.Time, r.Level, cut(r.Message, shortAttr), r.PC)
		out.AddAttrs(shortAttrs(as)...)
		out.AddAttrs(slog.String(fieldLogCut, fmt.Sprintf("a line of %d bytes, more than %d: only its short attributes are logged", n, h.max)))
		if err := h.json(&buf, true).Handle(ctx, out); err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(buf.Bytes())
	return err
}

// metadataAttrs returns the log attributes of a run's metadata: at most
// LogMetadataEntries entries, the first by key, with keys and values cut,
// and metadata_cut saying what was left out or cut.
func metadataAttrs(md map[string]string) []slog.Attr {
	if len(md) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(md))
	left := len(keys) - min(len(keys), LogMetadataEntries)
	keys = keys[:len(keys)-left]
	entries := make([]slog.Attr, 0, len(keys))
	cutKeys, cutValues := 0, 0
	for _, k := range keys {
		v := md[k]
		if len(k) > LogMetadataKeyBytes {
			cutKeys++
		}
		if len(v) > LogMetadataValueBytes {
			cutValues++
		}
		entries = append(entries, slog.String(cut(k, LogMetadataKeyBytes), cut(v, LogMetadataValueBytes)))
	}
	out := []slog.Attr{slog.GroupAttrs(fieldMetadata, entries...)}
	if left > 0 || cutKeys > 0 || cutValues > 0 {
		out = append(out, slog.String(fieldMetadataCut, fmt.Sprintf(
			"%d of %d entries not logged, %d keys and %d values cut (at most %d entries, keys of %d bytes, values of %d bytes)",
			left, len(md), cutKeys, cutValues, LogMetadataEntries, LogMetadataKeyBytes, LogMetadataValueBytes)))
	}
	return out
}
