//go:build cgo

package duckdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

func benchRows(n int) json.RawMessage {
	regions := []string{"EU", "US", "APAC", "LATAM"}
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "region": regions[i%4], "amount": float64(i%97) + 0.25, "units": i % 13}
	}
	b, _ := json.Marshal(rows)
	return b
}

const benchAggregate = "SELECT region, count(*) AS n, sum(units) AS units, avg(amount) AS avg FROM sales GROUP BY region ORDER BY region"

// openQuery is one run's use of DuckDB: open, load, aggregate, close.
func openQuery(b *testing.B, open func() (*duckdb.DB, error), rows json.RawMessage) {
	ctx := context.Background()
	db, err := open()
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Load(ctx, "sales", rows); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Query(ctx, benchAggregate, nil); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenQuery: open a fresh database, load 1,000 rows, aggregate,
// close.
func BenchmarkOpenQuery(b *testing.B) {
	rows := benchRows(1000)
	for b.Loop() {
		openQuery(b, func() (*duckdb.DB, error) { return duckdb.Open(context.Background(), duckdb.Config{}) }, rows)
	}
}

// BenchmarkPoolOpenQuery is BenchmarkOpenQuery with a database from a
// Pool, as a worker would do it; 10,000 rows as in the goal.
func BenchmarkPoolOpenQuery(b *testing.B) {
	for _, n := range []int{1000, 10_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			rows := benchRows(n)
			pool := duckdb.NewPool(1)
			defer pool.Close()
			for b.Loop() {
				openQuery(b, func() (*duckdb.DB, error) { return pool.Open(context.Background(), duckdb.Config{}) }, rows)
				b.StopTimer()
				time.Sleep(100 * time.Millisecond) // let the pool refill, as it would between runs
				b.StartTimer()
			}
		})
	}
}

// BenchmarkLoadQuery is the part of a run after Open: load and aggregate.
func BenchmarkLoadQuery(b *testing.B) {
	rows := benchRows(10_000)
	ctx := context.Background()
	db, err := duckdb.Open(ctx, duckdb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		if err := db.Load(ctx, "sales", rows); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Query(ctx, benchAggregate, nil); err != nil {
			b.Fatal(err)
		}
		if err := db.Exec(ctx, "DROP TABLE sales"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchValues is benchRows as Rows, what a runtime reads from its objects.
func benchValues(n int) *duckdb.Rows {
	regions := []string{"EU", "US", "APAC", "LATAM"}
	r := duckdb.NewRows(0)
	id, _ := r.Column("id")
	region, _ := r.Column("region")
	amount, _ := r.Column("amount")
	units, _ := r.Column("units")
	r.Grow(n)
	for i := range n {
		r.Set(id, duckdb.NumberValue(float64(i)))
		r.Set(region, duckdb.StringValue(regions[i%4]))
		r.Set(amount, duckdb.NumberValue(float64(i%97)+0.25))
		r.Set(units, duckdb.NumberValue(float64(i%13)))
		r.EndRow()
	}
	return r
}

// BenchmarkLoad compares loading 10,000 rows from JSON text (Load) and
// from values (LoadRows).
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	db, err := duckdb.Open(ctx, duckdb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	text, values := benchRows(10_000), benchValues(10_000)
	for _, tc := range []struct {
		name string
		load func() error
	}{
		{"json", func() error { return db.Load(ctx, "sales", text) }},
		{"values", func() error { return db.LoadRows(ctx, "sales", values) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := tc.load(); err != nil {
					b.Fatal(err)
				}
				if err := db.Exec(ctx, "DROP TABLE sales"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
