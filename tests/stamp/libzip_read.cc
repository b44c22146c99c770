/* libzip_read ARCHIVE: opens the archive with libzip (default flags), reads
 * every entry in full (libzip checks each CRC), and prints one line per entry:
 * "CRC32 SIZE NAME". Exit 0 on success, 1 with one line on stderr if libzip
 * cannot open the archive or read an entry. The stamp crash test uses it as an
 * independent ZIP reader that takes absolute offsets and picks among several
 * end records by consistency. */
#include <stdio.h>
#include <stdlib.h>
#include <zip.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: libzip_read ARCHIVE\n");
    return 2;
  }
  int err = 0;
  zip_t* za = zip_open(argv[1], ZIP_RDONLY, &err);
  if (za == NULL) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    fprintf(stderr, "libzip: cannot open: %s\n", zip_error_strerror(&e));
    return 1;
  }
  zip_int64_t n = zip_get_num_entries(za, 0);
  static char buf[1 << 16];
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(za, (zip_uint64_t)i, 0, &st) != 0) {
      fprintf(stderr, "libzip: stat %lld: %s\n", (long long)i, zip_strerror(za));
      return 1;
    }
    zip_file_t* f = zip_fopen_index(za, (zip_uint64_t)i, 0);
    if (f == NULL) {
      fprintf(stderr, "libzip: open %s: %s\n", st.name, zip_strerror(za));
      return 1;
    }
    zip_int64_t got, total = 0;
    while ((got = zip_fread(f, buf, sizeof buf)) > 0) total += got;
    if (got < 0 || (zip_uint64_t)total != st.size) {
      fprintf(stderr, "libzip: read %s: %s\n", st.name, zip_file_strerror(f));
      return 1;
    }
    zip_fclose(f);
    printf("%08x %llu %s\n", (unsigned)st.crc, (unsigned long long)st.size, st.name);
  }
  zip_discard(za);
  return 0;
}
