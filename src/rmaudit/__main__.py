from rmaudit.cli import main

main()
