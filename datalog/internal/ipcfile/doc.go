// Package ipcfile writes the parts of a log: Arrow IPC files whose record batches
// follow the stream format's rules for dictionaries, so that a part cut short still
// reads as a stream, and whose footer follows the file format's.
//
// # Layout
//
//	"ARROW1\0\0"                           the magic, padded to 8 bytes
//	schema message                         \
//	dictionary messages, record batch     |  an Arrow IPC stream: each batch is
//	dictionary deltas, record batch       |  preceded by the dictionary entries it
//	...                                   /   adds, as delta dictionary batches
//	one full dictionary batch per field    written by Finish
//	end-of-stream marker
//	footer, footer length, "ARROW1"        the footer lists the full dictionaries and
//	                                       the record batches, not the deltas
//
// A reader of the file format follows the footer, so it sees exactly one dictionary
// batch per dictionary, none of them a delta, as the IPC file format requires (Arrow
// C++ and so pyarrow reject deltas in files). A file whose writer was killed has no
// footer; read as a stream from byte 8, its deltas make every complete batch
// readable.
//
// # Use
//
// An Encoder encodes and compresses messages; a Writer writes one file with it:
// NewWriter writes the magic and the schema, WriteBatch a record batch, Finish the
// footer. Writers that take turns may share an Encoder.
//
// The messages are those that arrow-go's ipc.Writer writes, byte for byte when
// uncompressed (a test checks it), and the footer the one its file writer would
// write for the same blocks. Two differences make a log cheaper to write: the
// encoder compresses with encoders of its own (package lz4's for LZ4), and it tells
// the new entries of a dictionary by its length, checking the old ones with one
// comparison of bytes.
//
// The types it writes are those of a log: booleans, integers, floats, strings and
// bytes, structs, lists and fixed-size lists of them, and dictionaries of strings
// or bytes.
package ipcfile
