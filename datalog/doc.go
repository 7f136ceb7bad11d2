// Package datalog writes the activity logs of baton trials as Apache Arrow datasets,
// reads them back, recovers the parts of a writer that was killed, and compares a
// replay of the logged trials with the log (package replay runs them).
//
// It is the log format and nothing more: it takes its rows from events (package
// event: a Writer is an event.Sink) and imports neither runners nor registry, so
// that anything which reads or writes logs does not depend on the code that runs
// trials. A user writes logs with Dataset or Writer, reads them with Open and Log,
// and mends them with Recover; everything exported may be used, and the engine under
// internal/ may not.
//
// What you touch here: call NewDataset and give its Writers to a campaign as sinks to
// write a log; call Open to read one, Recover after a writer was killed, and Replay to
// check a log against its environment. Implement nothing: the format engine lives in
// datalog/internal.
//
// # Writing
//
// A Dataset is a log being written into a directory; its Writers are event.Sink
// values, one per goroutine that feeds events. For a campaign, give each worker its
// own:
//
//	ds, err := datalog.NewDataset(dir)
//	c, err := runners.NewCampaign(reg, spec, runners.WithWorkers(8),
//		runners.WithWorkerSinks(ds.WorkerSinks()))
//	summary, err := c.Run(ctx)
//	err = ds.Close()
//
// A runners.Controller runs its trials at once through shared sinks: wrap one Writer
// in Locked for it. Options: WithBatchRows (rows per record batch, 4096), WithMaxPartBytes
// (256 MiB), WithCompression (LZ4, the default, ZSTD or none: Arrow IPC body
// compression, see "Compression" below), WithMetadata (extra
// schema metadata), WithShard (several processes writing one directory),
// WithAllocator (where Arrow buffers come from).
//
// # Layout
//
// A log is a directory of Arrow IPC files (the file format, ".arrow"), hive-partitioned
// by agent, since each agent's observations have their own shape:
//
//	DIR/agent=strategy/part-00003.arrow   the strategy agent's steps
//	DIR/agent=motion/part-00004.arrow     the motion agent's steps
//	DIR/_trials/part-00000.arrow          one row when a trial starts, one when it ends
//	DIR/_episodes/part-00001.arrow        one row per episode that ended
//	DIR/_rewards/part-00007.arrow         retroactive rewards
//
// Part numbers are unique within a directory: a Dataset hands them out to its writers
// and starts after the highest already there (part-SHARD-NNNNN.arrow with WithShard).
// A part ends once it holds WithMaxPartBytes, or, for an agent's, once it holds
// MaxPartDictValues trial ids (or agent ids, or parent ids, or reward sources).
// A writer's parts of one table are numbered in the order it wrote them, so reading a
// table's parts by (shard, number) and each part's batches in order gives each trial's
// rows in the order they happened. Agent names are escaped as URL path segments in
// folder names (url.PathEscape), as pyarrow's hive partitioning expects. The tables
// whose folders start with '_' are skipped by pyarrow's dataset discovery, so that
// the steps can be read as one dataset.
//
// # Columns of the steps
//
// One row per event.StepEvent (per agent reported in a step):
//
//	trial_id         dictionary<int32, utf8>  the trial's id
//	episode          int32                    episode of the trial, from 0
//	tick             int64                    environment steps since the episode's reset
//	index            int32                    position among the reports of the tick (all agents)
//	agent_id         dictionary<int32, utf8>  "motion_3": the agent's name and sub-episode
//	parent_agent_id  dictionary<int32, utf8>  the id whose action started this sub-episode; null for none
//	start            bool                     first row of the sub-episode: the agent has not acted
//	acting           bool                     the agent acted next, on this row's observation
//	observation      fixed_size_list<float32>[observation_dim]  flat, as the observation space flattens
//	action           int64                    for a Discrete action space
//	                 fixed_size_list<float32>[n]  for a Box
//	                 fixed_size_list<int64>[n]    for a MultiDiscrete (n = len(nvec)) or MultiBinary
//	                                          null on start rows
//	action_mask      fixed_size_list<bool>[mask_len]  only for agents with a mask; null when absent
//	reward           float32                  the step's reward: the sum of reward_sources
//	reward_sources   list<struct<source: dictionary<int32, utf8>, value: float32>>
//	                                          "env" first, then "actor:NAME", "controller", ...
//	terminated       bool                     the sub-episode reached its natural end
//	truncated        bool                     a limit cut it short
//	span_ticks       int32                    environment steps the scored decision took (0 on start)
//	messages         list<struct<from: utf8, to: utf8, payload: binary, sent: int64>>
//	                                          the messages delivered at this tick
//
// The agent's name is the partition key, not a column of the files: pyarrow and polars
// add it from the folder as a string column named agent (a column of the same name in
// the files would clash with the partition field's type when pyarrow unifies the
// schemas); each file's metadata names it too (baton.agent). Every row of a tick
// carries the same messages: take them where index is 0 to see each once.
//
// # Transitions
//
// A transition of an agent id is two consecutive rows of that agent_id within a trial
// and episode (consecutive in the log's order, or after sorting by tick): the first
// row's observation and action_mask are what the agent acted on (that row has acting
// set), and the second row's action is what it did, its reward what that earned, its
// observation where it got to, its terminated and truncated whether the sub-episode
// ended there, and its span_ticks how many environment steps the decision took, for a
// discount of gamma^span_ticks. The second row's tick minus its span_ticks is the
// first row's tick. So, for the rows of one agent_id, the transitions are
//
//	(obs, mask) = row[k-1].observation, row[k-1].action_mask
//	action      = row[k].action
//	reward      = row[k].reward (plus its retroactive rewards, below)
//	next_obs    = row[k].observation
//	done        = row[k].terminated or row[k].truncated
//	discount    = gamma ** row[k].span_ticks
//
// for every row[k] that is not a start row; a start row has a null action and a zero
// reward and begins the id's sequence. There is no next_observation column: the next
// row is it, and repeating the observation would double the size of the log. An
// agent id whose episode was cut by the runner's tick limit, or whose trial stopped,
// may end on an acting row with no row after it: that action is not in the log.
//
// In polars, for example:
//
//	steps = (pl.scan_ipc(f"{DIR}/agent=motion/*.arrow").collect()
//	         .sort("trial_id", "episode", "tick", "index"))
//	keys = ["trial_id", "episode", "agent_id"]
//	transitions = steps.with_columns(
//	    pl.col("observation").shift(1).over(keys).alias("obs"),
//	    pl.col("action_mask").shift(1).over(keys).alias("mask"),
//	).filter(~pl.col("start"))
//	# obs, mask, action, reward, observation (the next), terminated | truncated, span_ticks
//
// # Actions a client did not choose
//
// An agent played by a client (remote's client actors: a person in the browser, a
// program over JSON) that does not act within its trial's timeout takes its default
// action, or its default policy's. The row whose action that is (the row that scores it) holds, in its
// reward_sources, the source "default" with the value 0 (remote.DefaultSource), next
// to the environment's reward: the rows of the agent's own choices have none. In
// polars, the default actions are
//
//	steps.filter(pl.col("reward_sources").list.eval(pl.element().struct.field("source") == "default").list.any())
//
// # Retroactive rewards
//
// A reward that arrives for a step already logged (event.RetroReward: a controller's
// reward addressed to a past tick, or one for an agent id whose sub-episode had ended)
// cannot change the row, which is written. It goes to the rewards table, one row per
// reward: trial_id, episode, tick, agent, agent_id, source, value (float32),
// arrived_episode, arrived_tick. Join it to the steps on (trial_id, episode, tick,
// agent_id), after casting the steps' dictionary columns to strings, and append its
// (source, value) pairs to the step's reward_sources and its values to its reward: that
// is the step's whole reward, as the runner counts it in returns. Row.Retro and
// Row.TotalReward do this in Go; the Python loader does it too.
//
// # Trials and episodes
//
// The trials table has a row when a trial starts running and another when it ends
// (the latest row of a trial id is its state; a trial whose latest row says
// "running" was cut off by a crash): trial_id, index (in its campaign), env, config
// (the JSON configuration, null for the defaults), seed (uint64), episodes,
// max_ticks, agents (JSON: [{"name", "observation_space", "action_space",
// "mask_len"}], spaces as the spaces JSON spec), policies (JSON: {agent: policy}, ""
// for a policy value), defines_success, state ("running", "ended", "stopped",
// "failed"), error and task (the name of the schedule's task the trial played,
// runners.Spec.Task; null outside a schedule, and absent from logs written before
// it: Trial.Task reads it). A trial rejected before it ran has only trial_id, state
// and error. The episodes table has, per episode that ended: trial_id, episode, seed,
// ticks, truncated, success (null where the environment does not define it) and
// returns (list<struct<agent: utf8, value: float64>>, every source and the
// retroactive rewards received so far) and metrics (list<struct<name: utf8, value:
// float64>>: the environment's per-episode metrics, registry.Entry.Metrics, in the
// entry's order, such as webtest's coverage and defects_found; a metric the episode
// did not tell is left out, and the list is empty for an environment that defines
// none; Episode.Metrics reads it, and a log written before the column has none).
// Their strings are plain utf8.
//
// # Schema metadata
//
// Every part's schema carries baton.format_version (FormatVersion: 2 since the
// checksums; readers refuse a later version, in Go and in Python), baton.version
// (the module's version), baton.table ("steps", "trials", "episodes" or "rewards")
// and baton.compression, plus what WithMetadata adds. An agent's parts also carry
// baton.agent, baton.observation_space and baton.action_space (the spaces JSON spec,
// from which spaces.Unmarshal and the Python side rebuild the spaces),
// baton.observation_dim, baton.action_dim and baton.mask_len, and, for the trial
// whose rows opened the part, baton.env, baton.env_config, baton.trial and
// baton.seed. A part holds many trials: the trials table has every trial's seed and
// configuration, which is what a replay reads.
//
// # Parts and dictionaries
//
// Each part is a valid IPC file, and also, after its first 8 bytes, an IPC stream:
//
//	"ARROW1\0\0"
//	schema
//	dictionaries, batch 0              each batch preceded by the dictionary entries it
//	dictionary deltas, batch 1         adds, as delta dictionary batches
//	...
//	full dictionaries                  one non-delta dictionary batch per dictionary
//	end-of-stream marker
//	footer, its length, "ARROW1"       lists the full dictionaries and the batches
//
// The IPC file format allows one dictionary batch per dictionary and no replacement;
// Arrow C++ (so pyarrow) refuses delta dictionaries in files too, though the format
// allows them, and arrow-go's file writer refuses any change of a dictionary. Yet the
// trial ids of a part are not known when it begins. So within a part a dictionary
// only grows (indices stay valid), and the part is written as a stream whose batches
// are preceded by their new entries as deltas; when the part is finished, each
// dictionary is written once more in full after the last batch, and the footer lists
// only those full dictionaries and the batches. Readers of the file format (pyarrow,
// polars, the JavaScript library, arrow-go) follow the footer and see a single
// dictionary per field; the deltas in the body are unreferenced bytes to them, and the
// IPC file format lets a dictionary batch come after the batches that use it. A part
// that lost its footer reads as the stream it is. Dictionaries start afresh in each
// part.
//
// # Compression
//
// The record batches are compressed with Arrow IPC body compression: each buffer is
// its uncompressed length and an LZ4 frame (the default) or a Zstandard frame, which
// pyarrow, polars and the JavaScript library (with its codecs registered) decompress.
// The package writes the frames itself, because an activity log repeats itself in a
// way a general compressor is slow to find: the observation of a row is mostly the
// observation of the row before it (a map that does not change, a position that
// does). The LZ4 frames of an observation column are made by comparing each row with
// the one above and copying what repeats, at the speed of the comparison, which also
// finds the whole-row repeats that a hash table of recent positions misses; a column
// of numbers whose values mostly repeat the one before (trial, agent and parent ids,
// episodes, rewards, spans) is compressed the same way, one value above, and one
// whose values change (ticks, list offsets) is stored in the frame as it is, since
// LZ4 would save little of it at a cost as high as the rest of the row. The frames
// are ordinary LZ4 frames (independent 64 KB blocks, no checksums, as arrow-go and
// Arrow C++ write them). With it, a maze log is about a twelfth of its uncompressed
// size, and writing it costs less CPU than writing the uncompressed one, whose bytes
// the operating system must copy; Zstandard makes files a third smaller again for
// more CPU.
//
// # Checksums
//
// Every record batch and dictionary batch of a part of format version 2 carries, in
// its message's custom metadata (Message.custom_metadata, which pyarrow exposes as a
// batch's custom metadata and other readers ignore), the key baton.crc32: the
// CRC-32 (IEEE, as Python's zlib.crc32 computes it) of the message's body as it is
// in the file, compressed buffers and padding included, in 8 lower-case hex digits.
// This package's reader and the Python loader check it on every read: a bit flipped
// on disk in a batch is an error naming the part (ErrCorrupt), not other numbers.
// Parts of format version 1 have no checksums and read as before.
//
// # Damaged parts
//
// This package reads every part as the stream after its magic, through a reader that
// checks each length and offset before it trusts it; a part with a footer has its
// footer checked first (every offset within the footer and the file), and its
// batches and full dictionaries must be those its footer lists, so that what
// pyarrow reads through the footer is what was checked. A damaged part (a footer
// that does not check or does not match, a batch whose checksum differs, lengths
// that do not hold together) is an error wrapping ErrCorrupt that names the file,
// never a panic; a file named as a part that is not an Arrow file is ErrNotLog,
// naming it. Log.Rows, Batches, Trials, Compare and Recover read the same way.
//
// # Crashes and Recover
//
// A batch is handed to the operating system as soon as it is written (by the
// writer's writing goroutine, soon after it fills), so a process killed at any moment
// leaves every batch it wrote readable: the open part has no
// footer, and this package's reader reads it as the stream after the leading magic,
// up to its last complete batch, without an error. Other readers need the footer:
// Recover rewrites each such part as a proper file (through a temporary file and a
// rename) and reports the batches and rows kept. Rows still buffered when the
// process died are lost; Writer.Flush writes them early. The batch the writer was
// killed in (a message whose lengths reach past the end of the file) ends the part
// there (Recovered.Cut says why).
//
// Recover also repairs damaged parts, and deletes nothing: it keeps every batch
// that reads intact, skipping a damaged record batch and going on with the batches
// after it while the stream's lengths hold (damage to them, or to a dictionary
// batch, whose entries later batches use, ends the part there), rewrites the part
// with those, and moves the original into the log's _damaged folder
// (DIR/_damaged/agent=motion/part-00003.arrow; readers skip it), as it does a part
// with no batch to keep and a file that is not an Arrow file. Recovered reports the
// batches and rows kept, the batches skipped, the damage and where the original
// went. A write that fails (a full disk) removes the temporary file and leaves the
// part as it was.
//
// # One writer at a time
//
// A log has one writer at a time: a Dataset holds a lock on its directory, flock(2)
// on the file .baton-writer.lock (.baton-writer-SHARD.lock with WithShard, so that
// shards may write one directory side by side) that holds its process id, until
// Close; the kernel lets go of it when the process ends, however it ends. A second
// Dataset of the same directory and shard, in any process, fails with a
// *LockedError (ErrLocked) naming the directory and the holder's process id, and so
// does Recover while any writer holds the log. Where flock is missing (not Unix),
// the lock file is created exclusively and removed at Close: a killed writer's
// stays, and the error names it.
//
// # Reading
//
// From Python, with pyarrow:
//
//	import pyarrow.dataset as ds
//	steps = ds.dataset(DIR, format="arrow", partitioning="hive")   # every agent
//	motion = ds.dataset(f"{DIR}/agent=motion", format="arrow").to_table()
//	trials = ds.dataset(f"{DIR}/_trials", format="arrow").to_table()
//	meta = motion.schema.metadata    # {b"baton.observation_space": b"{...}", ...}
//
// With polars: pl.scan_ipc(f"{DIR}/agent=motion/*.arrow") (dictionary columns become
// Categorical), or pl.scan_ipc(f"{DIR}/agent=*/*.arrow", hive_partitioning=True) for
// every agent that shares a schema. With Arrow JavaScript: tableFromIPC on each file,
// with the lz4 and zstd codecs registered for compressed logs.
//
// In Go, Open reads a log: Agents, Agent (the spaces, rebuilt), Rows (typed rows, as
// an iter.Seq2), Batches (the record batches), Trials, Episodes, Retro, Parts.
//
// # Replay
//
// Package replay (baton replay) re-runs every logged trial from its environment's
// name, configuration, seed, episodes and tick limit, with each agent playing its
// logged actions; Compare, here, compares the replay with the log and reports each
// step whose observation, mask, environment reward, end flags or span differ from the
// log, and the rows either side lacks. Compare takes the code that runs the trials as
// a PlayFunc, so that the log format does not depend on the runner: datalog imports
// neither runners nor registry. An intact log of a deterministic environment
// replays with no mismatch, and so does the log of a killed writer, recovered or not:
// a trial whose rows stop early (the writer's open batches were lost) or that lacks
// its end record is incomplete (ReplayReport.Incomplete), replayed as far as its rows
// go, which is no mismatch; a trial that differs is divergent (ReplayReport.Diverged).
// A trial whose steps are in the log but that has no row in the trials table (a
// truncated or lost _trials) cannot be replayed: Compare lists it
// (ReplayReport.Unlisted) and fails with ErrUnlisted, as it does for a log that has
// steps and no trials table.
// Compare reads each part once, in order, an agent's parts side by side as the trials
// need their rows (the parts that a campaign's workers write at the same time),
// grouping rows by trial as they come, and compares each trial as its rows arrive.
//
// # Memory, speed and concurrency
//
// A Writer appends each row straight into typed column buffers, one per Arrow buffer
// of the table, which it takes from the allocator once and reuses batch after batch;
// the record batch is built over them without a copy when the batch is written, and
// the dictionary indices of the row's strings (trial id, agent id, parent id, reward
// sources) come from small caches of the latest ones, mostly without hashing. A full
// batch goes to a goroutine of the writer's own, which encodes, compresses and
// writes it (through a buffer, in a few large writes) while the next batch fills:
// so the goroutine that feeds the writer (a campaign's worker) waits for the disk
// or the compressor only when the writing goroutine is a whole batch behind, and a
// machine with cores to spare logs at the speed of its workers. A failed write is
// returned by the writer's next call.
//
// A Writer holds at most two batches of rows per agent and per table, the one filling
// and the one being written, plus the dictionaries of its open parts (bounded by
// MaxPartDictValues), whatever the length of the run. Its step path allocates nothing
// (less than once per row in all, amortised: per batch and per trial, not per row).
// Dataset and Log are safe for concurrent use; a Writer is not (one per worker, or
// Locked). Rows, Batches and their slices are valid during one iteration.
package datalog
