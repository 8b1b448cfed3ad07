package typescript

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestCacheHit(t *testing.T) {
	c := NewCache(4)
	a1, err := c.Compile("const a: number = 1;\nreturn a;")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := c.Compile("const a: number = 1;\nreturn a;")
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Error("second Compile of the same source did not come from the cache")
	}
	if c.Len() != 1 {
		t.Errorf("Len = %d, want 1", c.Len())
	}
}

func TestCacheErrors(t *testing.T) {
	c := NewCache(4)
	_, err1 := c.Compile("const = ;")
	_, err2 := c.Compile("const = ;")
	var cerr *CompileError
	if !errors.As(err1, &cerr) || err1 != err2 {
		t.Errorf("errors %v and %v: want the same cached *CompileError", err1, err2)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(2)
	src := func(i int) string { return fmt.Sprintf("return %d;", i) }
	first, _ := c.Compile(src(1))
	c.Compile(src(2))
	c.Compile(src(1)) // 1 is now more recent than 2
	c.Compile(src(3)) // evicts 2
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	if again, _ := c.Compile(src(1)); again != first {
		t.Error("the most recently used entry was evicted")
	}
	// 2 was evicted: compiling it again evicts 3, the least recent now.
	c.Compile(src(2))
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
}

func TestCacheDefaultSize(t *testing.T) {
	if c := NewCache(0); c.max != DefaultCacheEntries {
		t.Errorf("NewCache(0) holds %d, want %d", c.max, DefaultCacheEntries)
	}
}

// TestCacheConcurrent compiles a few sources from many goroutines at once;
// with -race it checks the locking, and every caller of one source must get
// the one result.
func TestCacheConcurrent(t *testing.T) {
	c := NewCache(3)
	const sources, callers = 5, 16
	results := make([][]*Output, sources)
	for i := range results {
		results[i] = make([]*Output, callers)
	}
	var wg sync.WaitGroup
	for i := range sources {
		for j := range callers {
			wg.Add(1) // Done when this caller has its result
			go func() {
				defer wg.Done()
				out, err := c.Compile(fmt.Sprintf("const v: number = await Promise.resolve(%d);\nreturn v;", i))
				if err != nil {
					t.Error(err)
				}
				results[i][j] = out
			}()
		}
	}
	wg.Wait()
	if c.Len() > 3 {
		t.Errorf("Len = %d, want at most 3", c.Len())
	}
	for i := range sources {
		for j := range callers {
			if results[i][j] == nil || results[i][j].JS != results[i][0].JS {
				t.Fatalf("source %d, caller %d: different result", i, j)
			}
		}
	}
}
