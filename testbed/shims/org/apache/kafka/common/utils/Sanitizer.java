package org.apache.kafka.common.utils;

/**
 * For the test bed only, on a release that moved this class to
 * org.apache.kafka.common.utils.internals (Kafka 4.4): plugins built against an older Kafka
 * (Debezium 3.6's metrics) still call it by its old name. It delegates to the new one.
 * Compiled only where the release lacks the class (scripts/lib/testbed-procs.sh).
 */
public final class Sanitizer {
    private Sanitizer() {
    }

    public static String sanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.sanitize(name);
    }

    public static String desanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.desanitize(name);
    }

    public static String jmxSanitize(String name) {
        return org.apache.kafka.common.utils.internals.Sanitizer.jmxSanitize(name);
    }
}
