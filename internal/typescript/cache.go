package typescript

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"sync"
)

// DefaultCacheEntries is the capacity of a Cache made with NewCache(0).
const DefaultCacheEntries = 256

// Cache memoizes Compile by the SHA-256 of the source, keeping the most
// recently used results up to a fixed number of entries. Failed
// compilations are cached too: compiling is deterministic.
//
//	c := typescript.NewCache(1024)
//	out, err := c.Compile(src)
//
// Notes: a Cache is safe for concurrent use. Callers that ask for a source
// being compiled wait for that compilation rather than starting another.
// Results are shared between callers: treat them as read-only. A Cache
// needs no closing.
type Cache struct {
	max int

	mu sync.Mutex
	// entries indexes lru by key. Guarded by mu.
	entries map[[sha256.Size]byte]*list.Element
	// lru holds *cacheEntry values, most recently used first. Guarded by mu.
	lru *list.List
}

// cacheEntry is one source's compilation; out and err are written once,
// before done is closed.
type cacheEntry struct {
	key  [sha256.Size]byte
	done chan struct{}
	out  *Output
	err  error
}

// NewCache returns a Cache holding at most maxEntries results, or
// DefaultCacheEntries if maxEntries is 0 or less.
func NewCache(maxEntries int) *Cache {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	return &Cache{
		max:     maxEntries,
		entries: make(map[[sha256.Size]byte]*list.Element),
		lru:     list.New(),
	}
}

// Compile returns Compile(src), from the cache when it has it.
func (c *Cache) Compile(src string) (*Output, error) {
	key := sha256.Sum256([]byte(src))
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		<-e.done
		return e.out, e.err
	}
	e := &cacheEntry{key: key, done: make(chan struct{})}
	c.entries[key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		oldest := c.lru.Back()
		c.lru.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
	c.mu.Unlock()

	defer close(e.done)
	defer func() {
		if p := recover(); p != nil {
			// Waiters get an error, the entry goes so that a later call
			// tries again, and the panic goes on.
			e.err = fmt.Errorf("typescript: compile panicked: %v", p)
			c.remove(e)
			panic(p)
		}
	}()
	e.out, e.err = Compile(src)
	return e.out, e.err
}

// Len returns the number of results the cache holds, including any being
// compiled.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// remove drops e if it is still cached.
func (c *Cache) remove(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok && el.Value.(*cacheEntry) == e {
		c.lru.Remove(el)
		delete(c.entries, e.key)
	}
}
