# shellcheck shell=bash
#
# cellboot's devstack plugin. devstack sources this file with a mode and a
# phase: `stack install|post-config|extra|test-config`, `unstack`, `clean`
# (settings, beside it, has been sourced before). README.md says what each
# phase does and which services run where.

# shellcheck source=devstack/lib/cellboot
source "$(dirname "${BASH_SOURCE[0]}")/lib/cellboot"

case ${1:-} in
    stack)
        case ${2:-} in
            install)
                install_cellboot ;;
            post-config)
                configure_cellboot
                init_cellboot ;;
            extra)
                start_cellboot ;;
            test-config)
                check_cellboot ;;
        esac ;;
    unstack)
        stop_cellboot ;;
    clean)
        cleanup_cellboot ;;
esac
