from ppdm.cli import main

main()
