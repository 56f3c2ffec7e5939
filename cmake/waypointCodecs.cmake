# The compression libraries waypoint::app links privately (src/app/content/compression.cpp): zlib
# (gzip), libbrotli (br) and libzstd (zstd). Used by the build and, installed beside
# waypointConfig.cmake, by consumers of the static library, which must link them too. zlib
# comes from CMake's FindZLIB; Debian's libbrotli-dev ships no CMake package and its
# libzstd-dev's targets differ between releases, so both are found by header and library
# name into imported targets of our own. Sets waypoint_codecs_FOUND.
include_guard(GLOBAL)

find_package(ZLIB)
find_path(waypoint_brotli_include brotli/encode.h)
find_library(waypoint_brotlienc_library brotlienc)
find_library(waypoint_brotlidec_library brotlidec)
find_library(waypoint_brotlicommon_library brotlicommon)
find_path(waypoint_zstd_include zstd.h)
find_library(waypoint_zstd_library zstd)
mark_as_advanced(waypoint_brotli_include waypoint_brotlienc_library waypoint_brotlidec_library
                 waypoint_brotlicommon_library waypoint_zstd_include waypoint_zstd_library)

set(waypoint_codecs_FOUND FALSE)
if(ZLIB_FOUND AND waypoint_brotli_include AND waypoint_brotlienc_library
   AND waypoint_brotlidec_library AND waypoint_brotlicommon_library AND waypoint_zstd_include
   AND waypoint_zstd_library)
  set(waypoint_codecs_FOUND TRUE)
  if(NOT TARGET waypoint::codec_brotli)
    add_library(waypoint::codec_brotli INTERFACE IMPORTED)
    target_include_directories(waypoint::codec_brotli INTERFACE ${waypoint_brotli_include})
    target_link_libraries(waypoint::codec_brotli INTERFACE ${waypoint_brotlienc_library}
                          ${waypoint_brotlidec_library} ${waypoint_brotlicommon_library})
  endif()
  if(NOT TARGET waypoint::codec_zstd)
    add_library(waypoint::codec_zstd INTERFACE IMPORTED)
    target_include_directories(waypoint::codec_zstd INTERFACE ${waypoint_zstd_include})
    target_link_libraries(waypoint::codec_zstd INTERFACE ${waypoint_zstd_library})
  endif()
endif()
