# Sourced by scripts/test.sh and scripts/compat.sh: points the e2e suite at the test bed
# that scripts/local-connect.sh runs with the same KCO_TESTBED_* settings.
# shellcheck shell=bash

e2e_env() {
  local root=$1
  export KCO_E2E=required
  export KCO_TESTBED_DIR=${KCO_TESTBED_DIR:-$root/.testbed}
  export KCO_E2E_A_URLS="http://127.0.0.1:${KCO_TESTBED_A1_PORT:-8083},http://127.0.0.1:${KCO_TESTBED_A2_PORT:-8084}"
  export KCO_E2E_B_URL="http://127.0.0.1:${KCO_TESTBED_B_PORT:-8085}"
  export KCO_E2E_S_URL="http://127.0.0.1:${KCO_TESTBED_S_PORT:-8086}"
  export KCO_E2E_PG_PORT=${KCO_TESTBED_PG_PORT:-5433}
  export KCO_E2E_KAFKA="127.0.0.1:${KCO_TESTBED_KAFKA_PORT:-9092}"
  export KCO_E2E_IAM_KAFKA="127.0.0.1:${KCO_IAM_PORT:-9096}"
  export KCO_E2E_DR_URL="http://127.0.0.1:${KCO_DR_CONNECT_PORT:-8090}"
  export KCO_E2E_DR_BACK_URL="http://127.0.0.1:${KCO_DR_BACK_PORT:-8091}"
  export KCO_E2E_DR_KAFKA="127.0.0.1:${KCO_DR_SASL_PORT:-9194}"
  export KCO_E2E_PROMETHEUS_URL="http://127.0.0.1:${KCO_PROMETHEUS_PORT:-9090}"
  export KCO_E2E_TEXTFILE_DIR="$KCO_TESTBED_DIR/monitoring/textfile"
  export KCO_E2E_MSK_CONNECT_URL="http://127.0.0.1:${KCO_MSK_CONNECT_PORT:-8095}"
}

# The oldest Kafka release with the offsets API that the test bed runs (latest patch).
# shellcheck disable=SC2034 # read by the scripts that source this file
OLDEST_KAFKA_VERSION=3.6.2
