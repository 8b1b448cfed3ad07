// Command serverload drives a Stepbox server over loopback with many
// concurrent clients and reports throughput and latency percentiles.
//
//	go run ./bench/serverload                         # in-process server, HTTP+JSON and gRPC
//	go run ./bench/serverload -n 5000 -c 64 -lang typescript -proto json,connect,grpc,execute
//	go run ./bench/serverload -url http://127.0.0.1:8080 -key "$STEPBOX_KEY" -md results.md
//
// Without -url it starts an engine and a server in this process, on a
// loopback port, exactly as `stepbox serve` does; with -url it targets a
// running server, which must be on a loopback address: this tool sends
// traffic nowhere else. Each protocol gets -warmup runs first (not
// counted), then -n runs from -c concurrent clients, bounded by -duration.
// See README.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// Default steps: one data request, one console line, a small result that
// depends on the input, so that every answer can be checked.
var steps = map[string]string{
	"javascript": `const u = await dataProxy.request("user", {id: input.id});
console.log("hello", u.name);
return {id: input.id, name: u.name};`,
	"typescript": `interface User { name: string }
const u = (await dataProxy.request("user", {id: input.id})) as User;
console.log("hello", u.name);
return {id: input.id as number, name: u.name};`,
	"python": `u = await data_proxy.request("user", {"id": input["id"]})
print("hello", u["name"])
return {"id": input["id"], "name": u["name"]}`,
}

type options struct {
	n, c, warmup, pool int
	lang, url, key     string
	codeFile, md       string
	protos             []string
	duration, timeout  time.Duration
	wallMs             int
	isolation          string
	verbose            bool
}

func main() {
	var o options
	var protos string
	flag.IntVar(&o.n, "n", 2000, "runs per protocol")
	flag.IntVar(&o.c, "c", 32, "concurrent clients")
	flag.StringVar(&o.lang, "lang", "javascript", "language: javascript, typescript or python")
	flag.StringVar(&protos, "proto", "json,grpc", "comma-separated protocols: json (HTTP/1.1+JSON, as curl), connect (Connect over h2c), grpc (gRPC over h2c), execute (the Execute stream, answering the data request on it)")
	flag.StringVar(&o.url, "url", "", "target this running server (a loopback address) instead of one in-process")
	flag.StringVar(&o.key, "key", os.Getenv("STEPBOX_KEY"), "API key for -url (default $STEPBOX_KEY)")
	flag.StringVar(&o.codeFile, "code", "", "step file to run instead of the default step (e.g. bench/workloads/fib.js); its result is not checked")
	flag.StringVar(&o.md, "md", "", "also write the results as a markdown table to this file")
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "stop starting runs after this long, per protocol")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Second, "deadline of one call")
	flag.IntVar(&o.warmup, "warmup", 50, "uncounted runs per protocol first")
	flag.IntVar(&o.wallMs, "wall-ms", 0, "the runs' wallMs limit (0: the plan's)")
	flag.IntVar(&o.pool, "pool", 0, "in-process server: engine pool size (0: CPUs)")
	flag.StringVar(&o.isolation, "isolation", "process", "in-process server: process (jailed workers, the default of stepbox serve) or inprocess")
	flag.BoolVar(&o.verbose, "v", false, "in-process server: its logs on stderr at info level (default: warnings only)")
	flag.Parse()
	o.protos = strings.Split(protos, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "serverload:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.n < 1 || o.c < 1 || o.warmup < 0 {
		return errors.New("-n and -c must be positive, -warmup not negative")
	}
	if _, ok := steps[o.lang]; !ok {
		return fmt.Errorf("-lang %q: want javascript, typescript or python", o.lang)
	}
	for _, p := range o.protos {
		if !slices.Contains([]string{"json", "connect", "grpc", "execute"}, p) {
			return fmt.Errorf("-proto %q: want json, connect, grpc or execute", p)
		}
	}
	code, check := steps[o.lang], true
	if o.codeFile != "" {
		b, err := os.ReadFile(o.codeFile)
		if err != nil {
			return err
		}
		code, check = string(b), false
	}

	target := o.url
	where := ""
	if target == "" {
		url, desc, stop, err := startServer(o)
		if err != nil {
			return err
		}
		defer stop()
		target, where = url, desc
	} else {
		if err := loopbackOnly(target); err != nil {
			return err
		}
		target = strings.TrimRight(target, "/")
		where = "server at " + target
	}

	l := newLoad(o, target, code, check)
	defer l.close()
	header := fmt.Sprintf("%s; %s steps%s, %d runs per protocol (after %d warm-up), %d concurrent clients; client %s/%s, %d CPUs, %s",
		where, o.lang, codeNote(o.codeFile), o.n, o.warmup, o.c, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Println(header)
	var results []result
	for _, p := range o.protos {
		if o.warmup > 0 {
			w := l.drive(p, o.warmup)
			if w.ok == 0 {
				fmt.Print(w.errorReport())
				return fmt.Errorf("%s: every warm-up run failed", p)
			}
		}
		r := l.drive(p, o.n)
		results = append(results, r)
		fmt.Print(r.line())
	}
	fmt.Print("\n" + table(results))
	for _, r := range results {
		fmt.Print(r.errorReport())
	}
	if o.md != "" {
		md := fmt.Sprintf("Measured %s by `go run ./bench/serverload %s`: %s.\n\n%s",
			time.Now().UTC().Format("2006-01-02"), strings.Join(os.Args[1:], " "), header, table(results))
		for _, r := range results {
			md += r.errorReport()
		}
		if err := os.WriteFile(o.md, []byte(md), 0o644); err != nil {
			return err
		}
	}
	for _, r := range results {
		if r.ok == 0 {
			return fmt.Errorf("%s: no run succeeded", r.proto)
		}
	}
	return nil
}

func codeNote(file string) string {
	if file == "" {
		return " (one data request, one console line)"
	}
	return " (" + file + ")"
}

// loopbackOnly refuses a target that is not on this machine's loopback.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-url %q: want http://127.0.0.1:PORT", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-url %q: serverload only drives servers on a loopback address (127.0.0.1, [::1], localhost)", raw)
}

// startServer serves an engine in this process on a loopback port, as
// `stepbox serve` does with no configuration, and returns its URL.
func startServer(o options) (string, string, func(), error) {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	cfg := server.Config{
		Listen:   "127.0.0.1:0",
		PoolSize: o.pool,
		Logger:   server.NewLogger(os.Stderr, level),
		Metrics:  server.NewMetrics(),
		Version:  "serverload",
		// Room for every client: this measures the server, not its
		// refusals.
		QueueSize: max(64, 2*o.c),
	}
	ec := cfg.EngineConfig()
	ec.Isolation = sandbox.Isolation(o.isolation)
	eng, err := sandbox.New(ec)
	if err != nil {
		return "", "", nil, err
	}
	srv, err := server.New(eng, cfg)
	if err != nil {
		eng.Close(context.Background())
		return "", "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close(context.Background())
		return "", "", nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
		_ = eng.Close(ctx)
	}
	pool := o.pool
	if pool <= 0 {
		pool = runtime.NumCPU()
	}
	desc := fmt.Sprintf("in-process server on %s (isolation %s, pool %d, queue %d)", ln.Addr(), o.isolation, pool, cfg.QueueSize)
	return "http://" + ln.Addr().String(), desc, stop, nil
}

// load is the clients of one target.
type load struct {
	o      options
	target string
	code   string
	check  bool

	h1     *http.Client // HTTP/1.1, as curl
	h2c    *http.Client // cleartext HTTP/2, as gRPC clients
	rpc    stepboxv1connect.StepboxServiceClient
	grpc   stepboxv1connect.StepboxServiceClient
	stream *client.Client
}

func newLoad(o options, target, code string, check bool) *load {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	l := &load{
		o: o, target: target, code: code, check: check,
		h1: &http.Client{Transport: &http.Transport{
			MaxIdleConns: o.c, MaxIdleConnsPerHost: o.c, DialContext: loopbackDial,
		}},
		h2c: &http.Client{Transport: &http.Transport{Protocols: &p, DialContext: loopbackDial}},
	}
	var opts []connect.ClientOption
	if o.key != "" {
		opts = append(opts, connect.WithInterceptors(bearer(o.key)))
	}
	l.rpc = stepboxv1connect.NewStepboxServiceClient(l.h2c, target, opts...)
	l.grpc = stepboxv1connect.NewStepboxServiceClient(l.h2c, target, append(opts, connect.WithGRPC())...)
	l.stream = client.New(target, client.Options{APIKey: o.key, HTTPClient: l.h2c})
	return l
}

func (l *load) close() {
	l.h1.CloseIdleConnections()
	l.h2c.CloseIdleConnections()
}

// loopbackDial dials only loopback addresses, whatever a redirect or a
// name says.
func loopbackDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return nil, fmt.Errorf("refusing to dial %s (%s): not a loopback address", addr, ip.IP)
		}
	}
	return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
}

// outcome is one call: its latency, the server's run time, and its error
// class ("" for success).
type outcome struct {
	done    bool
	latency time.Duration
	srv     serverStats
	fail    string
}

// drive makes n calls over proto from o.c clients and measures them.
func (l *load) drive(proto string, n int) result {
	outs := make([]outcome, n)
	var next atomic.Int64
	deadline := time.Now().Add(l.o.duration)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(l.o.c, n) {
		wg.Add(1) // Done when this client has no call left to make.
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || time.Now().After(deadline) {
					return
				}
				outs[i] = l.call(proto, i)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	// Calls claimed after the deadline were never made.
	outs = slices.DeleteFunc(outs, func(o outcome) bool { return !o.done })
	return summarize(proto, outs, elapsed)
}

// call makes call i, with input {"id": i}, and checks the answer.
func (l *load) call(proto string, i int) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), l.o.timeout)
	defer cancel()
	input := fmt.Sprintf(`{"id": %d}`, i)
	user := fmt.Sprintf(`{"name": "user%d"}`, i)
	req := &pb.RunRequest{Language: l.o.lang, Code: l.code, InputJson: input, DataJson: map[string]string{"user": user}}
	if l.o.wallMs > 0 {
		req.Limits = &pb.Limits{WallMs: int32(l.o.wallMs)}
	}
	t0 := time.Now()
	var value string
	var st serverStats
	var fail string
	switch proto {
	case "json":
		value, st, fail = l.callJSON(ctx, req)
	case "connect", "grpc":
		c := l.rpc
		if proto == "grpc" {
			c = l.grpc
		}
		resp, err := c.Run(ctx, connect.NewRequest(req))
		if err != nil {
			fail = "rpc " + connect.CodeOf(err).String() + ": " + firstLine(err.Error())
			break
		}
		value, st, fail = fromResponse(resp.Msg)
	case "execute":
		value, st, fail = l.callExecute(ctx, req, user)
	}
	lat := time.Since(t0)
	if fail == "" && l.check {
		want := fmt.Sprintf(`{"id":%d,"name":"user%d"}`, i, i)
		if compact(value) != want {
			fail = "wrong result"
		}
	}
	return outcome{done: true, latency: lat, srv: st, fail: fail}
}

// serverStats are the server's timings of a run.
type serverStats struct{ wallMs, queueMs float64 }

// callJSON posts the request as curl would: HTTP/1.1, JSON.
func (l *load) callJSON(ctx context.Context, req *pb.RunRequest) (string, serverStats, string) {
	data := map[string]json.RawMessage{}
	for m, v := range req.DataJson {
		data[m] = json.RawMessage(v)
	}
	body := map[string]any{"language": req.Language, "code": req.Code, "input": json.RawMessage(req.InputJson), "data": data}
	if req.Limits != nil {
		body["limits"] = map[string]any{"wallMs": req.Limits.WallMs}
	}
	b, _ := json.Marshal(body)
	hr, err := http.NewRequestWithContext(ctx, "POST", l.target+"/stepbox.v1.StepboxService/Run", strings.NewReader(string(b)))
	if err != nil {
		return "", serverStats{}, "request: " + err.Error()
	}
	hr.Header.Set("Content-Type", "application/json")
	if l.o.key != "" {
		hr.Header.Set("Authorization", "Bearer "+l.o.key)
	}
	resp, err := l.h1.Do(hr)
	if err != nil {
		return "", serverStats{}, "transport: " + firstLine(err.Error())
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", serverStats{}, "transport: " + firstLine(err.Error())
	}
	if resp.StatusCode != 200 {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(raw, &e)
		return "", serverStats{}, fmt.Sprintf("HTTP %d %s: %s", resp.StatusCode, e.Code, firstLine(e.Message))
	}
	type stats struct{ WallMs, QueueMs float64 }
	var out struct {
		Result *struct {
			Value json.RawMessage
			Stats stats
		}
		Error *struct {
			Code, Limit, Message string
			Stats                stats
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", serverStats{}, "bad answer: " + err.Error()
	}
	switch {
	case out.Result != nil:
		return string(out.Result.Value), serverStats{out.Result.Stats.WallMs, out.Result.Stats.QueueMs}, ""
	case out.Error != nil:
		return "", serverStats{out.Error.Stats.WallMs, out.Error.Stats.QueueMs}, "run " + out.Error.Code + ": " + firstLine(out.Error.Message)
	}
	return "", serverStats{}, "bad answer: neither result nor error"
}

func fromResponse(m *pb.RunResponse) (string, serverStats, string) {
	if r := m.GetResult(); r != nil {
		v, _ := json.Marshal(r.GetValue().AsInterface()) // a Value always marshals
		return string(v), serverStats{r.GetStats().GetWallMs(), r.GetStats().GetQueueMs()}, ""
	}
	if e := m.GetError(); e != nil {
		return "", serverStats{e.GetStats().GetWallMs(), e.GetStats().GetQueueMs()}, "run " + e.GetCode() + ": " + firstLine(e.GetMessage())
	}
	return "", serverStats{}, "bad answer: neither result nor error"
}

// callExecute runs the step over the Execute stream, answering its data
// request on the stream.
func (l *load) callExecute(ctx context.Context, req *pb.RunRequest, user string) (string, serverStats, string) {
	sreq := sandbox.Request{Language: sandbox.Language(req.Language), Code: req.Code, Input: json.RawMessage(req.InputJson)}
	if req.Limits != nil {
		sreq.Limits.WallMs = int(req.Limits.WallMs)
	}
	st, err := l.stream.Submit(ctx, sreq)
	if err != nil {
		return "", serverStats{}, classify(err)
	}
	for ev := range st.Events() {
		if dr := ev.DataRequest; dr != nil {
			if dr.Method == "user" {
				_ = st.Respond(dr.ID, json.RawMessage(user))
			} else {
				_ = st.RespondError(dr.ID, "no such method")
			}
		}
	}
	res, err := st.Wait()
	var se *sandbox.Error
	if errors.As(err, &se) {
		return "", serverStats{se.Stats.WallMs, se.Stats.QueueMs}, classify(err)
	}
	if err != nil {
		return "", serverStats{}, classify(err)
	}
	return string(res.Value), serverStats{res.Stats.WallMs, res.Stats.QueueMs}, ""
}

func classify(err error) string {
	var se *sandbox.Error
	if errors.As(err, &se) {
		return "run " + string(se.Code) + ": " + firstLine(se.Message)
	}
	return "rpc " + connect.CodeOf(err).String() + ": " + firstLine(err.Error())
}

func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, s connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, s)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// result summarizes the calls of one protocol.
type result struct {
	proto                   string
	runs, ok                int
	elapsed                 time.Duration
	p50, p90, p99, max, avg time.Duration
	wallP50, queueP50       float64 // the server's, ms
	errors                  map[string]int
}

func summarize(proto string, outs []outcome, elapsed time.Duration) result {
	r := result{proto: proto, runs: len(outs), elapsed: elapsed, errors: map[string]int{}}
	var lats []time.Duration
	var walls, queues []float64
	var sum time.Duration
	for _, o := range outs {
		lats = append(lats, o.latency)
		sum += o.latency
		if o.fail != "" {
			r.errors[o.fail]++
			continue
		}
		r.ok++
		walls = append(walls, o.srv.wallMs)
		queues = append(queues, o.srv.queueMs)
	}
	if len(lats) == 0 {
		return r
	}
	slices.Sort(lats)
	slices.Sort(walls)
	slices.Sort(queues)
	pct := func(p float64) time.Duration { return lats[min(len(lats)-1, int(p*float64(len(lats))))] }
	r.p50, r.p90, r.p99, r.max = pct(0.50), pct(0.90), pct(0.99), lats[len(lats)-1]
	r.avg = sum / time.Duration(len(lats))
	if len(walls) > 0 {
		r.wallP50, r.queueP50 = walls[len(walls)/2], queues[len(queues)/2]
	}
	return r
}

func (r result) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

func (r result) line() string {
	return fmt.Sprintf("%-8s %d runs in %.2fs: %d ok, %d errors; %.0f runs/s; latency p50 %s p90 %s p99 %s max %s\n",
		r.proto, r.runs, r.elapsed.Seconds(), r.ok, r.runs-r.ok, r.rate(), ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max))
}

func (r result) errorReport() string {
	if len(r.errors) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s errors:\n", r.proto)
	keys := slices.SortedFunc(maps.Keys(r.errors), func(a, b string) int {
		return cmp.Or(cmp.Compare(r.errors[b], r.errors[a]), strings.Compare(a, b))
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "- %d × %s\n", r.errors[k], k)
	}
	return b.String()
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// table renders the results as a markdown table (also readable as text).
func table(rs []result) string {
	rows := [][]string{{"protocol", "runs", "ok", "errors", "runs/s", "p50", "p90", "p99", "max", "mean", "server queue p50", "server wall p50"}}
	for _, r := range rs {
		rows = append(rows, []string{
			r.proto, fmt.Sprint(r.runs), fmt.Sprint(r.ok), fmt.Sprint(r.runs - r.ok), fmt.Sprintf("%.0f", r.rate()),
			ms(r.p50), ms(r.p90), ms(r.p99), ms(r.max), ms(r.avg), fmt.Sprintf("%.2f ms", r.queueP50), fmt.Sprintf("%.2f ms", r.wallP50),
		})
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for j, row := range rows {
		b.WriteString("|")
		for i, c := range row {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", width[i], c)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], c)
			}
		}
		b.WriteString("\n")
		if j == 0 {
			b.WriteString("|")
			for i, w := range width {
				if i == 0 {
					b.WriteString(" " + strings.Repeat("-", w) + " |")
				} else {
					b.WriteString(" " + strings.Repeat("-", w-1) + ": |")
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
