package datalog

//go:generate go tool stringer -type=Compression -linecomment

import (
	"fmt"
	"maps"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Compression is the body compression of the record batches of a log. Its String is
// the name the schema metadata and the command line use: "none", "lz4" or "zstd".
type Compression int

// The compressions a log may use.
const (
	// Uncompressed writes buffers as they are.
	Uncompressed Compression = 1 + iota // none
	// LZ4 compresses each buffer with LZ4 frames (the default, as in pyarrow's
	// Feather files): an activity log repeats itself row after row (an observation
	// holds the same map at every step), so its frames are a tenth or less of the
	// data, and writing them costs less CPU than writing the data as it is.
	LZ4 // lz4
	// ZSTD compresses each buffer with Zstandard: slower, smaller.
	ZSTD // zstd
)

// ParseCompression reads a compression's name: "none" (or ""), "lz4" or "zstd", in
// any case.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return Uncompressed, nil
	case "lz4":
		return LZ4, nil
	case "zstd":
		return ZSTD, nil
	}
	return 0, fmt.Errorf("%w: unknown compression %q (want none, lz4 or zstd)", ErrOption, s)
}

// Defaults of the writer's options.
const (
	// DefaultBatchRows is how many rows a record batch holds unless WithBatchRows
	// says otherwise.
	DefaultBatchRows = 4096
	// DefaultCompression is the compression of a log unless WithCompression says
	// otherwise.
	DefaultCompression = LZ4
	// DefaultMaxPartBytes is the size past which a part is closed and the next one
	// begun, unless WithMaxPartBytes says otherwise.
	DefaultMaxPartBytes = 256 << 20
	// MaxPartDictValues ends an agent's part, whatever its size, once one of its
	// dictionaries (of trial ids, mostly) holds this many values. Each batch adds
	// its new values to a dictionary as a delta, which the IPC writer checks against
	// the values written before: bounding them bounds that work per batch.
	MaxPartDictValues = 4096
)

// WriteOption configures NewDataset (and so its writers). Options follow
// the one style of baton's packages (grpc-go's): an option is a value that only this
// package's With functions make; the constructor applies them in the order given and
// ignores a nil one; an option left out, or given its zero value, means the default
// its With function documents; a bad value makes the constructor fail with an error
// wrapping the package's sentinel (here ErrOption). An option that configures several
// constructors has a type that implements the option interface of each (Option).
type WriteOption interface{ applyWrite(*writeConfig) }

// ReadOption configures Open and Recover, in the style of WriteOption.
type ReadOption interface{ applyRead(*readConfig) }

// Option configures writing, reading and replaying.
type Option interface {
	WriteOption
	ReadOption
	ReplayOption
}

type writeConfig struct {
	mem         memory.Allocator
	batchRows   int
	maxPart     int64
	compression Compression
	meta        map[string]string
	shard       string
	// noChecksums leaves the checksums out of the batches (tests and benchmarks
	// only: a log of format version 2 without them does not read).
	noChecksums bool
	// noObservations leaves the observations out of the batches: neither copied
	// nor compressed (benchmarks only: the log does not read).
	noObservations bool
	// inline makes each writer encode and write its batches itself
	// (WithInlineWrites).
	inline bool
	err    error
}

type readConfig struct {
	mem memory.Allocator
	// wrapWrite, when not nil, wraps the files that Recover writes (tests make their
	// writes fail with it).
	wrapWrite writeWrapper
}

func newWriteConfig(opts []WriteOption) (writeConfig, error) {
	c := writeConfig{batchRows: DefaultBatchRows, maxPart: DefaultMaxPartBytes, compression: DefaultCompression}
	for _, o := range opts {
		if o != nil {
			o.applyWrite(&c)
		}
	}
	if c.mem == nil {
		c.mem = memory.NewGoAllocator()
	}
	return c, c.err
}

func newReadConfig(opts []ReadOption) readConfig {
	var c readConfig
	for _, o := range opts {
		if o != nil {
			o.applyRead(&c)
		}
	}
	if c.mem == nil {
		c.mem = memory.NewGoAllocator()
	}
	return c
}

type allocatorOption struct{ mem memory.Allocator }

func (o allocatorOption) applyWrite(c *writeConfig) { c.mem = o.mem }
func (o allocatorOption) applyRead(c *readConfig)   { c.mem = o.mem }

// WithAllocator makes the writers and readers take their Arrow buffers from mem; nil
// means memory.NewGoAllocator(). A writer takes its column buffers (two batches per
// table) once and the IPC encoders' buffers as batches need them, keeping those for
// the next batches, and gives everything back at Close. Pass a
// memory.CheckedAllocator in tests to prove that everything taken is given back.
func WithAllocator(mem memory.Allocator) Option { return allocatorOption{mem} }

type writeOption func(*writeConfig)

func (o writeOption) applyWrite(c *writeConfig) { o(c) }

// WithBatchRows sets how many rows of an agent a writer buffers before it writes them
// as one record batch; 0 means DefaultBatchRows. A batch is also written when its part
// would otherwise stay open (Flush, Close). Memory grows with n: a writer holds two
// batches of n rows of every agent, the one filling and the one being written.
func WithBatchRows(n int) WriteOption {
	return writeOption(func(c *writeConfig) {
		switch {
		case n < 0:
			c.err = fmt.Errorf("%w: WithBatchRows(%d): want 0 (for %d) or more", ErrOption, n, DefaultBatchRows)
		case n > 0:
			c.batchRows = n
		}
	})
}

// WithMaxPartBytes closes a part once it holds n bytes or more and begins the next one
// with the next batch; 0 means DefaultMaxPartBytes. A part holds at least one batch.
// Where an agent's part ends is decided while its last batch is still being written,
// from the size of the batches before and the ratio at which they were compressed,
// so that it depends on the rows alone: such a part may exceed n by up to two
// batches. An agent's part also ends once it holds MaxPartDictValues trial ids.
func WithMaxPartBytes(n int64) WriteOption {
	return writeOption(func(c *writeConfig) {
		switch {
		case n < 0:
			c.err = fmt.Errorf("%w: WithMaxPartBytes(%d): want 0 (for %d) or more", ErrOption, n, DefaultMaxPartBytes)
		case n > 0:
			c.maxPart = n
		}
	})
}

// WithCompression compresses the body buffers of every record batch with c (Arrow
// IPC body compression, which pyarrow, polars and the JavaScript reader with its
// codecs registered read); 0 means DefaultCompression. Recover rewrites a part with the
// compression its schema metadata names, whatever this option says.
func WithCompression(c Compression) WriteOption {
	return writeOption(func(cfg *writeConfig) {
		switch c {
		case 0:
			cfg.compression = DefaultCompression
		case Uncompressed, LZ4, ZSTD:
			cfg.compression = c
		default:
			cfg.err = fmt.Errorf("%w: WithCompression(%v): want Uncompressed, LZ4 or ZSTD", ErrOption, c)
		}
	})
}

// WithInlineWrites, given true, makes each writer encode, compress and write its
// batches itself, in the Handle (or Flush, or Close) call that fills them, instead of
// handing them to a goroutine of its own that writes one while the next fills; false,
// the default, keeps that goroutine. The files are the same byte for byte either way.
//
// The goroutine pays where a core is spare to run it beside the goroutines that feed
// the writers. Where they already fill the cores (a campaign with as many workers as
// GOMAXPROCS, as baton run --log writes it then), it runs on their cores anyway, and
// writing inline spares the hand-over of every batch between goroutines and the
// second set of column buffers per table, whose bytes would otherwise move from one
// core's cache to another's: a maze campaign on two workers and two cores spends
// some 5 to 15 % less CPU time on its log (docs/performance-logging.md).
// A writer that writes inline holds one batch of rows per agent and per table.
func WithInlineWrites(on bool) WriteOption {
	return writeOption(func(c *writeConfig) { c.inline = on })
}

// WithMetadata adds key-value pairs to the schema metadata of every part the dataset
// writes (a command line, a campaign's seed, a git commit); nil adds nothing. Keys that
// start with "baton." are the package's own and are rejected.
func WithMetadata(md map[string]string) WriteOption {
	return writeOption(func(c *writeConfig) {
		for k := range md {
			if strings.HasPrefix(k, metaPrefix) {
				c.err = fmt.Errorf("%w: WithMetadata: key %q: keys starting with %q are reserved", ErrOption, k, metaPrefix)
				return
			}
		}
		if c.meta == nil {
			c.meta = map[string]string{}
		}
		maps.Copy(c.meta, md)
	})
}

// WithShard names the parts this dataset writes part-SHARD-NNNNN.arrow instead of
// part-NNNNN.arrow, so that several processes (the shards of a campaign spread over
// machines) can write into one directory without taking each other's names; "" means
// no shard. A shard name is made of letters, digits and '_'.
func WithShard(name string) WriteOption {
	return writeOption(func(c *writeConfig) {
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
				c.err = fmt.Errorf("%w: WithShard(%q): want letters, digits and '_' only", ErrOption, name)
				return
			}
		}
		c.shard = name
	})
}
