/*
 * log.h - the daemon's log on stderr: one line per event, as JSON (for log
 * shippers), plain text (for people) or nothing.
 *
 * The macros test the level before evaluating their arguments, so a
 * disabled log costs one comparison and never formats, allocates or reads
 * a clock.
 *
 * Thread-safety: a logger is read-only after start; each line is written
 * with a single fwrite, so lines from concurrent threads do not interleave.
 */
#ifndef IMP_SERVER_LOG_H
#define IMP_SERVER_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#if defined(__GNUC__)
#define IMP_PRINTF_LIKE(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define IMP_PRINTF_LIKE(fmt_index, first_arg)
#endif

/* IMP_SET_ERROR(err, printf-format, args...): how the server's fallible
 * functions (config parsing, starting the listener) fill the error struct
 * the caller may pass (any struct with a char array `message`; NULL: not
 * wanted). */
#define IMP_SET_ERROR(err, ...)                                                                    \
    do {                                                                                           \
        if (err) snprintf((err)->message, sizeof(err)->message, __VA_ARGS__);                      \
    } while (0)

typedef enum imp_log_format { IMP_LOG_OFF = 0, IMP_LOG_TEXT, IMP_LOG_JSON } imp_log_format;

/* Lower is more severe; a logger writes events up to and including its level. */
typedef enum imp_log_level { IMP_LOG_ERROR = 0, IMP_LOG_WARN, IMP_LOG_INFO } imp_log_level;

typedef struct imp_logger {
    imp_log_format format;
    imp_log_level level;
} imp_logger;

#define IMP_LOG_ENABLED(lg, lvl) ((lg)->format != IMP_LOG_OFF && (lvl) <= (lg)->level)

/* IMP_LOG(logger, level, printf-format, args...) */
#define IMP_LOG(lg, lvl, ...)                                                                      \
    do {                                                                                           \
        const imp_logger *imp_log_lg_ = (lg);                                                      \
        if (IMP_LOG_ENABLED(imp_log_lg_, (lvl))) imp_log_write(imp_log_lg_, (lvl), __VA_ARGS__);   \
    } while (0)

/* IMP_LOG_ACCESS(logger, method, path, status, bytes_in, bytes_out, duration_ms) */
#define IMP_LOG_ACCESS(lg, ...)                                                                    \
    do {                                                                                           \
        const imp_logger *imp_log_lg_ = (lg);                                                      \
        if (IMP_LOG_ENABLED(imp_log_lg_, IMP_LOG_INFO)) imp_log_access(imp_log_lg_, __VA_ARGS__);  \
    } while (0)

/* Parses "json", "text" or "off". Returns 1 and sets *out, or 0 if unknown. */
int imp_log_parse_format(const char *s, imp_log_format *out);
const char *imp_log_format_name(imp_log_format format);

/* Use through IMP_LOG / IMP_LOG_ACCESS; these do not check the level. */
void imp_log_write(const imp_logger *lg, imp_log_level lvl, const char *fmt, ...)
    IMP_PRINTF_LIKE(3, 4);
void imp_log_vwrite(const imp_logger *lg, imp_log_level lvl, const char *fmt, va_list ap)
    IMP_PRINTF_LIKE(3, 0);
void imp_log_access(const imp_logger *lg, const char *method, const char *path, int status,
                    size_t bytes_in, size_t bytes_out, double duration_ms);

#endif
