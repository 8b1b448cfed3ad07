package server

import (
	"io"
	"log/slog"
)

// Log field names, in one place: log queries match on them. Every line
// about a run carries fieldRun.
const (
	fieldRun        = "run"
	fieldTenant     = "tenant"
	fieldPlan       = "plan"
	fieldLanguage   = "language"
	fieldProcedure  = "procedure"
	fieldCode       = "code"
	fieldOutcome    = "outcome"
	fieldLimit      = "limit"
	fieldDurationMs = "duration_ms"
	fieldWallMs     = "wall_ms"
	fieldQueueMs    = "queue_ms"
	fieldCPUMs      = "cpu_ms"
	fieldPeer       = "peer"
	fieldListen     = "listen"
	fieldAuth       = "auth"
	fieldInFlight   = "in_flight"
	fieldError      = "error"
	fieldMetadata   = "metadata"
)

// NewLogger returns the server's logger: JSON lines on w from level up.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// ParseLogLevel parses debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) { return parseLevel(s) }
