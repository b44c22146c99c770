// stamp's pieces, apart from each other: the planner (what to add, replace
// and remove; pure, over an in-memory archive) and the executor (the write
// sequence on a file). stamp.cc ties them together.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tsctl/archive.h"
#include "tsctl/stamp.h"
#include "tsctl/zip_writer.h"

namespace tsctl::stamp {

// The signature of ZIP's end of central directory record ("PK\5\6").
inline constexpr char kEocdSignature[4] = {'P', 'K', 5, 6};

// ---- Planner (stamp_plan.cc) ----

struct Plan {
  std::vector<StampAction> actions;
  nlohmann::json producer;                    // the producer record written; null if untouched
  std::map<std::string, std::string> writes;  // extra/ name -> new content
  std::set<std::string> removes;              // extra/ names removed
  std::vector<const ZipEntry*> kept;          // entries kept, central-directory order
};

// Checks the options on their own: record names, --set keys, --meta JSON.
// Throws tsctl::Error (kUsage).
void CheckOptions(const StampOptions& options);

// Plans the stamp of `archive`. Throws tsctl::Error: kUsage (a record both
// written and removed, a missing record to remove), kFormat (an existing
// producer record that is not a JSON object without --replace, a damaged
// ZIP structure: see RequireSoundStructure).
Plan MakePlan(const Archive& archive, const StampOptions& options);

// A writer starting at `base` holding the plan's kept records (their
// central records verbatim) and its new records.
ZipWriter MakeWriter(const Archive& archive, const Plan& plan, uint64_t base);

// ---- Executor (stamp_write.cc) ----

// What the journal of an interrupted in-place stamp says about the file as
// it was before that stamp.
struct Interrupted {
  uint64_t old_size = 0;        // size before the interrupted stamp
  uint64_t old_cd_offset = 0;   // its central directory
  uint64_t old_eocd_offset = 0; // its end record (signature possibly cleared)
};

// ---- Journal (stamp_journal.cc) ----

inline constexpr uint64_t kJournalSize = 40;  // magic, 3 x u64, CRC-32, 4 reserved
// The smallest page size Linux uses: the unit in which the kernel may cut a
// write when the writer is killed.
inline constexpr uint64_t kPage = 4096;

// The journal's bytes for `j`.
std::string EncodeJournal(const Interrupted& j);

// A journal right before the central directory `layout` declares (magic and
// CRC-32 hold, it describes a file that ended before it), proven or not;
// nullopt if none. What inspect and validate report as a journal-like tail.
std::optional<Interrupted> JournalBeforeDirectory(const ByteSource& src, const ZipLayout& layout);

// The tail an interrupted in-place stamp leaves, trusted only as far as it
// is proven: a journal right before the central directory the last end
// record declares (the "old view"), such that
//  - the interruption shows: the end record the journal names still has its
//    signature (the stamp stopped before step 4), or a complete new end
//    record ends where the view was placed (it stopped after step 3); a
//    consistent archive with a journal-like tail shows neither;
//  - rolling back (that end record's signature back, the file cut where the
//    journal says) gives an archive whose end record is the one the journal
//    names and whose central directory, where the journal says, is byte for
//    byte the one readers see now: the view restored is the view readers
//    see now, never another model.
// Returns nullopt for anything else (a forged journal included).
std::optional<Interrupted> FindInterrupted(const ByteSource& src, const ZipLayout& layout);

// `file` as a rollback to `j` would leave it (cut at old_size, the end
// record's signature back), without writing: what --output and --dry-run
// read of a file that an interrupted stamp left.
std::unique_ptr<ByteSource> RolledBackSource(std::unique_ptr<ByteSource> file, const Interrupted& j);

// Recognises what a kill during the first write of an in-place stamp can
// leave when the old view spans several pages: the kernel ends a write cut
// by a fatal signal on a page boundary, so the file is the original, a hole,
// and the first pages of the view, with no end record at its end. The view
// starts on a page and begins with the journal: looks for a journal on each
// of the last pages (up to 256 MiB back) that names a smaller file whose end
// record is intact and whose central directory starts with the bytes the
// view's copy of it holds (as far as it got). Returns nullopt for any other
// file. Throws tsctl::Error (kIo) if the file cannot be read.
std::optional<Interrupted> FindTornView(const ByteSource& src);

// Puts the file back exactly as it was before the interrupted stamp (byte for
// byte): restores the old end record's signature, syncs, truncates, syncs.
// Throws tsctl::Error (kIo).
void RollBack(int fd, const std::string& path, const Interrupted& at);

// Applies the plan to the open file `fd` in place (see the invariant in
// stamp_write.cc). Returns the bytes the file grew by. On an error the file
// is rolled back (best effort) and the error rethrown (kIo).
uint64_t WriteInPlace(int fd, const std::string& path, const Archive& archive, const Plan& plan);

// Writes the stamped archive to `output` through AtomicFile, copying the
// bytes before `copy_end` (the records) from `path`. Returns its size.
uint64_t WriteCopy(const std::string& path, const std::string& output, const Archive& archive,
                   const Plan& plan, uint64_t copy_end);

}  // namespace tsctl::stamp
