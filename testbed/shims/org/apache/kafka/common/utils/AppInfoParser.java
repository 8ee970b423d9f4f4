package org.apache.kafka.common.utils;

/**
 * For the test bed only, on a release that moved this class to
 * org.apache.kafka.common.utils.internals (Kafka 4.4): plugins built against an older Kafka
 * (the FileStream and MirrorMaker 2 plugin jars of 4.3, which 4.4.0 runs because its own are
 * not published) ask it for their version (Connector.version()). It answers with the
 * worker's, as the plugins of the worker's own release would. Compiled only where the
 * release lacks the class (scripts/lib/testbed-procs.sh).
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}
